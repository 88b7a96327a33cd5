/**
 * Fixtures for the wiki backend's end-to-end tests: the git environment with the four variables of
 * Document 3 pointed at a fake wiki, its remote URL, what a page file's body is, and which writes the fake
 * was asked for.
 */
import type { ExecutionContext } from "ava";
import type { FakeWiki, FakeWikiRequest } from "./fake-wiki.js";
import { type GitEnv, givenGitEnv } from "./git.js";

/** The four required variables (Document 3) plus the base URL override, for `wiki`. */
export function wikiVars(wiki: FakeWiki): Record<string, string> {
  return {
    VENDOR_API_KEY: wiki.credentials.token,
    VENDOR_EMAIL: wiki.credentials.email,
    SVC_WIKI_TENANT: "acme",
    SVC_WIKI_BASE_URL: wiki.url,
    SVC_ALLOWED_ORIGINS: wiki.origin,
  };
}

/** `givenGitEnv` configured for `wiki`; every fetch syncs (`SVC_SYNC_INTERVAL=0`). */
export function givenWikiEnv(
  t: ExecutionContext,
  wiki: FakeWiki,
  extra: Readonly<Record<string, string>> = {},
): GitEnv {
  return givenGitEnv(t, { ...wikiVars(wiki), SVC_SYNC_INTERVAL: "0", ...extra });
}

/** `svc::<base>/wiki/projects/<KEY>`: the URL `svc init wiki::<KEY>` writes. */
export function wikiRemote(baseUrl: string, spaceKey: string): string {
  return `svc::${baseUrl}/wiki/projects/${spaceKey}`;
}

/**
 * The bytes of a page file after its frontmatter: everything after the second `---\n` line. Frontmatter
 * values are single lines, so that line is the closing one even when the body itself starts with `---`.
 */
export function pageFileBody(file: Buffer): Buffer {
  const text = file.toString("latin1");
  if (!text.startsWith("---\n")) throw new Error(`not a page file: ${JSON.stringify(text.slice(0, 40))}`);
  const close = text.indexOf("\n---\n", 3);
  if (close < 0) throw new Error("page file without a closing --- line");
  return file.subarray(close + "\n---\n".length);
}

/** The requests after the first `from` that were not GETs (the writes), in order. */
export function wikiWrites(wiki: FakeWiki, from = 0): FakeWikiRequest[] {
  return wiki.requests.slice(from).filter((request) => request.method !== "GET");
}

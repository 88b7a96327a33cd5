/**
 * Each backend's next-page pointer, whatever the server sends as it (DESIGN.md §3: a repeated cursor or next
 * URL ends a listing with an error; §6: pagination URLs are egress-checked): the forge's `Link: <…>;
 * rel="next"`, the wiki's `_links.next`, the tracker's `nextPageToken`. Real backends against a scripted
 * loopback server that serves the generated pointers one result page after another, with a second loopback
 * server ("elsewhere") that the allowlist `http://127.0.0.1:*` would let through: the requests made and the
 * outcome are those of a plain model (follow, end, or refuse with the reason), so a next URL on another
 * origin is refused before anything is sent to it, a pointer seen before is refused, and every other
 * failure is an `SvcError` with a message, never a crash. A listing whose every pointer is new, each result
 * page answered at once, never repeats and takes long to reach the page cap: `SVC_LISTING_TIMEOUT_MS` stops it.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import test, { type ExecutionContext } from "ava";
import fc from "fast-check";
import { SvcError } from "../core/errors.js";
import { HttpClient, isServerFault } from "../core/http.js";
import { DEFAULT_MAX_PAGES, ListingTimeoutError, PaginationError } from "../core/pagination.js";
import { fuzzParams } from "../testing/fuzz.js";
import type { Backend } from "./backend.js";
import { ForgeBackend } from "./forge/backend.js";
import { forgeConfig } from "./forge/config.js";
import { TrackerBackend } from "./tracker/backend.js";
import { trackerConfig } from "./tracker/config.js";
import { WikiBackend } from "./wiki/backend.js";
import { wikiConfig } from "./wiki/config.js";

const ALLOWED = "http://127.0.0.1:*";

function client(): HttpClient {
  return new HttpClient({ agent: "pagination-test", allowedOrigins: ALLOWED });
}

interface Hit {
  readonly path: string;
  readonly body: string;
}

interface Site {
  readonly origin: string;
  readonly port: number;
  readonly hits: Hit[];
  /** What the next listing request is answered with; set per run. */
  answer: (hit: Hit, index: number) => { status?: number; headers?: Record<string, string>; body: unknown };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** A loopback server answering with `site.answer`; every request recorded in `site.hits`. */
async function givenSite(t: ExecutionContext): Promise<Site> {
  const site: Site = { origin: "", port: 0, hits: [], answer: () => ({ body: {} }) };
  const server = createServer(async (req, res) => {
    // The tracker's field list, which its full listing asks first: no custom fields, and no hit of the walk.
    if (req.url === "/rest/api/3/field") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("[]");
      return;
    }
    const hit = { path: req.url ?? "", body: await readBody(req) };
    site.hits.push(hit);
    const answer = site.answer(hit, site.hits.length - 1);
    res.writeHead(answer.status ?? 200, { "content-type": "application/json", ...answer.headers });
    res.end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(site, { origin: `http://127.0.0.1:${port}`, port });
}

type Outcome = { kind: "listed" } | { kind: "refused"; error: SvcError };

/** The listing's outcome; any failure but an `SvcError` with a message fails the property. */
async function outcomeOf(backend: Backend): Promise<Outcome> {
  try {
    await backend.listAll();
    return { kind: "listed" };
  } catch (error) {
    if (!(error instanceof SvcError) || error.message === "") throw error;
    return { kind: "refused", error };
  }
}

/** What the model expects: the request targets after the first, and how the listing ends. */
interface Expected {
  readonly follows: string[];
  readonly end: "listed" | "repeat" | "other-origin" | "not-a-url" | "not-a-path" | "no-token";
}

/** The model's end, read from the backend's error (or success). */
function endOf(outcome: Outcome): Expected["end"] | string {
  if (outcome.kind === "listed") return "listed";
  const { error } = outcome;
  if (error instanceof PaginationError && /goes round in a circle/.test(error.message)) return "repeat";
  if (/the Link header points the next result page to/.test(error.message)) return "other-origin";
  if (/the Link header's next URL is not a URL/.test(error.message)) return "not-a-url";
  if (/_links\.next is not a path on this site/.test(error.message)) return "not-a-path";
  if (/isLast: false\) but sent no nextPageToken/.test(error.message)) return "no-token";
  return `unexpected: ${error.message}`;
}

/** Pointers with `{site}`, `{port}` and `{elsewhere}` filled in. */
function filled(text: string, site: Site, elsewhere: Site): string {
  return text
    .replaceAll("{site}", site.origin)
    .replaceAll("{port}", String(site.port))
    .replaceAll("{elsewhere}", elsewhere.origin);
}

/** Next URLs and paths: the same pages again and again (repeats), other origins, and broken ones. */
const urlPointer = fc.oneof(
  fc.nat(3).map((n) => `{site}/page/${n}`),
  fc.nat(3).map((n) => `/page/${n}?cursor=${n}`),
  fc.nat(3).map((n) => `{elsewhere}/page/${n}`),
  fc.constantFrom(
    "//127.0.0.1:1/x",
    "http://localhost:{port}/page/0",
    "https://127.0.0.1:{port}/page/0",
    "http://127.0.0.1:{port}./page/9",
    "http://evil@127.0.0.1:{port}/page/8",
    "{site}/page/0#fragment",
    "{site}/a/../page/0",
    "https://evil.example/x",
    "http://[::1/x",
    "http://",
    "page/5",
    "",
  ),
  fc.string({ maxLength: 8 }).map((text) => text.replace(/[<>]/g, "")),
);

// ---------------------------------------------------------------------------------------------------------
// forge: Link rel="next", resolved against the API root, followed only on its origin.

function forgeModel(pointers: readonly string[], site: Site, first: string): Expected {
  const seen = new Set([first]);
  const follows: string[] = [];
  for (const pointer of pointers) {
    if (pointer === "") return { follows, end: "listed" };
    let url: URL;
    try {
      url = new URL(pointer, site.origin);
    } catch {
      return { follows, end: "not-a-url" };
    }
    if (url.origin !== site.origin) return { follows, end: "other-origin" };
    if (seen.has(url.href)) return { follows, end: "repeat" };
    seen.add(url.href);
    follows.push(`${url.pathname}${url.search}`);
  }
  return { follows, end: "listed" };
}

test("property: forge: a Link next is followed on its own origin only, once; nothing reaches another origin", async (t) => {
  const site = await givenSite(t);
  const elsewhere = await givenSite(t);
  const config = forgeConfig({
    FORGE_TOKEN: "token-1",
    SVC_FORGE_BASE_URL: site.origin,
    SVC_ALLOWED_ORIGINS: ALLOWED,
  });
  await fc.assert(
    fc.asyncProperty(fc.array(urlPointer, { maxLength: 6 }), async (raw) => {
      const pointers = raw.map((p) => filled(p, site, elsewhere));
      site.hits.length = 0;
      site.answer = (_hit, index) => {
        const next = pointers[index];
        const headers: Record<string, string> = next === undefined ? {} : { link: `<${next}>; rel="next"` };
        return { body: [], headers };
      };
      const backend = new ForgeBackend(config, "acme/widgets", client());
      const outcome = await outcomeOf(backend);
      const first = site.hits[0]?.path ?? "";
      const expected = forgeModel(pointers, site, new URL(first, site.origin).href);
      if (elsewhere.hits.length > 0) throw new Error(`sent to another origin: ${elsewhere.hits[0]?.path}`);
      if (endOf(outcome) !== expected.end)
        throw new Error(`ended ${endOf(outcome)}, expected ${expected.end}`);
      const follows = site.hits.slice(1).map((hit) => hit.path);
      if (JSON.stringify(follows) !== JSON.stringify(expected.follows))
        throw new Error(`asked ${JSON.stringify(follows)}, expected ${JSON.stringify(expected.follows)}`);
    }),
    fuzzParams(60),
  );
  t.pass();
});

// ---------------------------------------------------------------------------------------------------------
// wiki: _links.next, a path joined to the tenant base.

function wikiModel(pointers: readonly unknown[], site: Site, first: string): Expected {
  const seen = new Set([first]);
  const follows: string[] = [];
  for (const pointer of pointers) {
    if (typeof pointer !== "string" || pointer === "") return { follows, end: "listed" };
    if (!pointer.startsWith("/")) return { follows, end: "not-a-path" };
    if (seen.has(pointer)) return { follows, end: "repeat" };
    seen.add(pointer);
    const url = new URL(`${site.origin}${pointer}`);
    follows.push(`${url.pathname}${url.search}`);
  }
  return { follows, end: "listed" };
}

test("property: wiki: _links.next is a path on the tenant, followed once; nothing reaches another origin", async (t) => {
  const site = await givenSite(t);
  const elsewhere = await givenSite(t);
  const config = wikiConfig({
    VENDOR_API_KEY: "token-1",
    VENDOR_EMAIL: "me@example.test",
    SVC_WIKI_TENANT: "acme",
    SVC_WIKI_BASE_URL: site.origin,
    SVC_ALLOWED_ORIGINS: ALLOWED,
  });
  const pointer = fc.oneof(
    { weight: 3, arbitrary: fc.nat(2).map((n) => `/page/${n}`) },
    { weight: 2, arbitrary: urlPointer },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
  );
  await fc.assert(
    fc.asyncProperty(fc.array(pointer, { maxLength: 6 }), async (raw) => {
      const pointers = raw.map((p) => (typeof p === "string" ? filled(p, site, elsewhere) : p));
      site.hits.length = 0;
      let page = 0;
      site.answer = (hit) =>
        hit.path.startsWith("/wiki/api/v2/spaces?keys=")
          ? { body: { results: [{ id: "1", key: "SVC", name: "SVC" }], _links: {} } }
          : { body: { results: [], _links: pointers[page] === undefined ? {} : { next: pointers[page++] } } };
      const backend = new WikiBackend(config, "SVC", client());
      const outcome = await outcomeOf(backend);
      const listing = site.hits.filter((hit) => !hit.path.startsWith("/wiki/api/v2/spaces?keys="));
      const expected = wikiModel(pointers, site, listing[0]?.path ?? "");
      if (elsewhere.hits.length > 0) throw new Error(`sent to another origin: ${elsewhere.hits[0]?.path}`);
      if (endOf(outcome) !== expected.end)
        throw new Error(`ended ${endOf(outcome)}, expected ${expected.end}`);
      const follows = listing.slice(1).map((hit) => hit.path);
      if (JSON.stringify(follows) !== JSON.stringify(expected.follows))
        throw new Error(`asked ${JSON.stringify(follows)}, expected ${JSON.stringify(expected.follows)}`);
    }),
    fuzzParams(60),
  );
  t.pass();
});

// ---------------------------------------------------------------------------------------------------------
// tracker: nextPageToken, sent back in the next search's body.

function trackerModel(tokens: readonly (string | undefined)[]): Expected {
  const seen = new Set<string>();
  const follows: string[] = [];
  for (const token of tokens) {
    if (token === undefined) return { follows, end: "listed" };
    if (token === "") return { follows, end: "no-token" };
    if (seen.has(token)) return { follows, end: "repeat" };
    seen.add(token);
    follows.push(token);
  }
  return { follows, end: "listed" };
}

test("property: tracker: each nextPageToken is sent back once; a repeated one ends the listing", async (t) => {
  const site = await givenSite(t);
  const config = trackerConfig({
    TRACKER_EMAIL: "me@example.test",
    TRACKER_API_TOKEN: "token-1",
    SVC_TRACKER_INSTANCE: "acme",
    SVC_TRACKER_BASE_URL: site.origin,
    SVC_ALLOWED_ORIGINS: ALLOWED,
  });
  const token = fc.oneof(fc.constantFrom("a", "b", "c", "", "x".repeat(5000)), fc.string({ maxLength: 6 }));
  await fc.assert(
    fc.asyncProperty(fc.array(token, { maxLength: 6 }), async (tokens) => {
      site.hits.length = 0;
      site.answer = (_hit, index) => {
        const next = tokens[index];
        return {
          body: {
            issues: [],
            isLast: next === undefined,
            ...(next === undefined ? {} : { nextPageToken: next }),
          },
        };
      };
      const backend = new TrackerBackend(config, "TEST", client());
      const outcome = await outcomeOf(backend);
      const expected = trackerModel(tokens);
      if (endOf(outcome) !== expected.end)
        throw new Error(`ended ${endOf(outcome)}, expected ${expected.end}`);
      const sent = site.hits.map((hit) => (JSON.parse(hit.body) as { nextPageToken?: string }).nextPageToken);
      if (JSON.stringify(sent) !== JSON.stringify([undefined, ...expected.follows]))
        throw new Error(`sent ${JSON.stringify(sent)}, expected ${JSON.stringify(expected.follows)}`);
    }),
    fuzzParams(60),
  );
  t.pass();
});

// ---------------------------------------------------------------------------------------------------------
// Every backend: an endless listing of new pointers ends at SVC_LISTING_TIMEOUT_MS.

const ENDLESS: readonly {
  readonly kind: string;
  readonly listing: string;
  readonly endless: (site: Site) => Site["answer"];
  readonly backend: (site: Site) => Backend;
}[] = [
  {
    kind: "forge",
    listing: "listing the issues of acme/widgets",
    endless: (site) => (_hit, index) => ({
      body: [],
      headers: { link: `<${site.origin}/repos/acme/widgets/issues?page=${index + 2}>; rel="next"` },
    }),
    backend: (site) =>
      new ForgeBackend(
        forgeConfig({
          FORGE_TOKEN: "token-1",
          SVC_FORGE_BASE_URL: site.origin,
          SVC_ALLOWED_ORIGINS: ALLOWED,
        }),
        "acme/widgets",
        client(),
      ),
  },
  {
    kind: "wiki",
    listing: "listing the pages of space SVC",
    endless: () => (hit, index) =>
      hit.path.startsWith("/wiki/api/v2/spaces?keys=")
        ? { body: { results: [{ id: "1", key: "SVC", name: "SVC" }], _links: {} } }
        : { body: { results: [], _links: { next: `/wiki/api/v2/spaces/1/pages?cursor=c${index}` } } },
    backend: (site) =>
      new WikiBackend(
        wikiConfig({
          VENDOR_API_KEY: "token-1",
          VENDOR_EMAIL: "me@example.test",
          SVC_WIKI_TENANT: "acme",
          SVC_WIKI_BASE_URL: site.origin,
          SVC_ALLOWED_ORIGINS: ALLOWED,
        }),
        "SVC",
        client(),
      ),
  },
  {
    kind: "tracker",
    listing: "listing the issues of project TEST",
    endless: () => (_hit, index) => ({ body: { issues: [], isLast: false, nextPageToken: `t${index}` } }),
    backend: (site) =>
      new TrackerBackend(
        trackerConfig({
          TRACKER_EMAIL: "me@example.test",
          TRACKER_API_TOKEN: "token-1",
          SVC_TRACKER_INSTANCE: "acme",
          SVC_TRACKER_BASE_URL: site.origin,
          SVC_ALLOWED_ORIGINS: ALLOWED,
        }),
        "TEST",
        client(),
      ),
  },
];

for (const { kind, listing, endless, backend } of ENDLESS) {
  // Serial: the walk reads SVC_LISTING_TIMEOUT_MS from the environment, set for this test alone.
  test.serial(
    `${kind}: a listing whose every result page points to a new one is stopped by SVC_LISTING_TIMEOUT_MS, naming the server and the setting`,
    async (t) => {
      const site = await givenSite(t);
      site.answer = endless(site);
      process.env.SVC_LISTING_TIMEOUT_MS = "500";
      let error: unknown;
      try {
        error = await t.throwsAsync(backend(site).listAll(), { instanceOf: ListingTimeoutError });
      } finally {
        delete process.env.SVC_LISTING_TIMEOUT_MS;
      }
      const message = (error as ListingTimeoutError | undefined)?.message ?? "";
      const origin = site.origin.replaceAll(".", "\\.");
      const match = new RegExp(
        `^${listing} at ${origin} did not end within 500 ms \\(SVC_LISTING_TIMEOUT_MS, the longest svc gives ` +
          `one listing\\); svc stopped after (\\d+) result pages\\. If the listing is really that long, run the ` +
          `command again with e\\.g\\. SVC_LISTING_TIMEOUT_MS=1000; if not, is ${origin} overloaded or stuck\\?$`,
      ).exec(message);
      t.truthy(match, message);
      const pages = Number(match?.[1]);
      const listed = site.hits.filter((hit) => !hit.path.startsWith("/wiki/api/v2/spaces?keys=")).length;
      t.is(pages, listed, "one request per result page read");
      t.true(
        pages > 1 && pages < DEFAULT_MAX_PAGES,
        `${pages} result pages: the time stopped it, not the page cap`,
      );
      t.true(isServerFault(error), "a server fault: the command to run again is printed");
    },
  );
}

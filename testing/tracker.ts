/**
 * Fixtures for the tracker backend's end-to-end tests: the git environment with the variables of issue 15
 * pointed at a fake tracker, its remote URL, and which requests were writes.
 */
import type { ExecutionContext } from "ava";
import type { FakeTracker, FakeTrackerRequest } from "./fake-tracker.js";
import { type GitEnv, givenGitEnv } from "./git.js";

/** Document 3's variables (Basic auth, the instance) with the base URL override and the allowlist. */
export function trackerVars(tracker: FakeTracker): Record<string, string> {
  return {
    TRACKER_EMAIL: tracker.email,
    TRACKER_API_TOKEN: tracker.apiToken,
    SVC_TRACKER_INSTANCE: "acme",
    SVC_TRACKER_BASE_URL: tracker.url,
    SVC_ALLOWED_ORIGINS: tracker.origin,
  };
}

/** `givenGitEnv` configured for `tracker`; every fetch syncs (`SVC_SYNC_INTERVAL=0`). */
export function givenTrackerEnv(
  t: ExecutionContext,
  tracker: FakeTracker,
  extra: Readonly<Record<string, string>> = {},
): GitEnv {
  return givenGitEnv(t, { ...trackerVars(tracker), SVC_SYNC_INTERVAL: "0", ...extra });
}

/** `givenTrackerEnv` with svc sent to `tracker` through the proxy at `proxyUrl` (e.g. a fault proxy). */
export function givenProxiedTrackerEnv(t: ExecutionContext, tracker: FakeTracker, proxyUrl: string): GitEnv {
  return givenTrackerEnv(t, tracker, {
    SVC_TRACKER_BASE_URL: proxyUrl,
    SVC_ALLOWED_ORIGINS: "http://127.0.0.1:*",
  });
}

/** `svc::<base>/tracker/projects/<KEY>`: the URL `svc init tracker::<KEY>` writes. */
export function trackerRemote(baseUrl: string, key: string): string {
  return `svc::${baseUrl}/tracker/projects/${key}`;
}

/** `issues/TEST-42.md`. */
export function trackerPath(key: string): string {
  return `issues/${key}.md`;
}

/** The requests after the first `from` that changed something (not GETs, not searches), in order. */
export function trackerWrites(tracker: FakeTracker, from = 0): FakeTrackerRequest[] {
  return tracker.requests
    .slice(from)
    .filter((request) => request.method !== "GET" && !request.path.startsWith("/rest/api/3/search/"));
}

/** The JQL of each search request after the first `from`. */
export function trackerSearches(tracker: FakeTracker, from = 0): string[] {
  return tracker.requests
    .slice(from)
    .filter((request) => request.path.startsWith("/rest/api/3/search/jql"))
    .map((request) => (JSON.parse(request.body || "{}") as { jql?: string }).jql ?? "");
}

/** A description holding what Markdown cannot say (a table, a panel, a mention) among what it can. */
export const TABLE = {
  type: "table",
  attrs: { isNumberColumnEnabled: false, layout: "default" },
  content: [
    {
      type: "tableRow",
      content: [
        {
          type: "tableHeader",
          attrs: {},
          content: [{ type: "paragraph", content: [{ type: "text", text: "Step" }] }],
        },
        {
          type: "tableCell",
          attrs: {},
          content: [{ type: "paragraph", content: [{ type: "text", text: "Open" }] }],
        },
      ],
    },
  ],
};
export const PANEL = {
  type: "panel",
  attrs: { panelType: "warning" },
  content: [{ type: "paragraph", content: [{ type: "text", text: "Careful: data loss" }] }],
};
export const MENTION = {
  type: "paragraph",
  content: [
    { type: "text", text: "Ask " },
    { type: "mention", attrs: { id: "557058:alice-0002", text: "@Alice" } },
    { type: "text", text: " first." },
  ],
};
export const RICH_DESCRIPTION = {
  type: "doc",
  version: 1,
  content: [
    { type: "heading", attrs: { level: 2 }, content: [{ type: "text", text: "Steps" }] },
    {
      type: "paragraph",
      content: [
        { type: "text", text: "It fails " },
        { type: "text", text: "badly", marks: [{ type: "strong" }] },
        { type: "text", text: "." },
      ],
    },
    TABLE,
    PANEL,
    MENTION,
    {
      type: "bulletList",
      content: [
        { type: "listItem", content: [{ type: "paragraph", content: [{ type: "text", text: "one" }] }] },
      ],
    },
  ],
};

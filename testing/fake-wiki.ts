/**
 * A fake of the hosted wiki's REST API v2 (Atlassian Confluence Cloud REST API v2) on an ephemeral loopback
 * port, for the wiki adapter's tests (DESIGN.md §6: "a fake server … that speaks the vendor's real
 * request/response shapes").
 *
 * Shapes follow the vendor's public OpenAPI document for v2 (https://developer.atlassian.com/cloud/confluence/rest/v2/,
 * spec file https://dac-static.atlassian.com/cloud/confluence/openapi-v2.v3.json):
 * - `GET /wiki/api/v2/spaces` (`ids`, `keys` comma-separated, `type`, `status`, `sort`, `cursor`, `limit`
 *   default 25, 1..250; sorted by id ascending) → `{results: SpaceBulk[], _links: {next?, base}}`.
 * - `GET /wiki/api/v2/spaces/{id}/pages` (`depth`, `sort` PageSortOrder, `status` default current+archived,
 *   repeated or comma-separated, `title`, `body-format`, `cursor`, `limit`) → `{results: PageBulk[], _links:
 *   {next?, base}}`. `sort=modified-date` orders by the page's last version (`version.createdAt`).
 * - `GET|PUT|DELETE /wiki/api/v2/pages/{id}`, `POST /wiki/api/v2/pages` → PageSingle plus `_links.base`
 *   (POST and PUT answer 200; DELETE answers 204, moves the page to the trash, and `purge=true` on a trashed
 *   page removes it for good; PUT with status `current` on a trashed page restores it without touching its
 *   content).
 * - Pagination: `_links.next` is a relative URL (`/wiki/api/v2/...?...&cursor=<opaque>`), repeated in a
 *   `Link: <next>; rel="next", <base>; rel="base"` header; neither is present on the last page.
 * Where the vendor documents nothing, the choice is marked ASSUMPTION in a comment.
 *
 * `_links.base` defaults to a second loopback server that only counts its hits (`baseHits`): the adapter must
 * join `_links.next` to its own tenant base URL and never follow `_links.base` (Document 3 "Pagination
 * rules" 2), so any test can assert `baseHits === 0`.
 *
 * Every exchange is judged as it happens against the operations recorded in
 * fixtures/vendor/confluence-v2.json (testing/vendor-contract.ts); `close()`, which each test's teardown
 * calls, fails naming every departure. An answer or request wrong on purpose says so where it is made
 * (`deliberate`; DELIBERATE_HEADER).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { ExecutionContext } from "ava";
import { closeServer, listenOnLoopback } from "./loopback.js";
import { ContractWatch } from "./vendor-contract.js";

export type SpaceType = "global" | "collaboration" | "knowledge_base" | "personal";
export type PageStatus = "current" | "archived" | "trashed";

export interface FakeWikiSpaceSpec {
  /** The raw space key, e.g. `SVC`. */
  readonly key: string;
  readonly name?: string;
  /**
   * The space's active alias (`currentActiveAlias`); defaults to the key, which is what the vendor reports for
   * a space that never had another alias.
   */
  readonly alias?: string;
  readonly type?: SpaceType;
  readonly status?: "current" | "archived";
  readonly description?: string;
  /** Create a homepage (`homepageId`) that new root pages hang under. Off by default so page counts stay exact. */
  readonly homepage?: boolean;
  /**
   * The account sees the space in `GET /spaces` but may not read or write its pages: every page request in it
   * is answered with `deniedStatus`.
   */
  readonly denied?: boolean;
}

/**
 * A hostile listing, for the client's pagination and size guards (issue 11). It applies to the paginated
 * listing `on` names: `pages` (`GET /spaces/{id}/pages`, the default) or `spaces` (`GET /spaces` without
 * `keys`/`ids`, so that looking a space up by key still works).
 * - `repeat-cursor`: the cursor is ignored (every answer is the first result page again) and every answer's
 *   `_links.next` names the same cursor, as a server whose cursor handling is broken does.
 * - `endless`: every answer names a new cursor, forever; the answers after the first have no results.
 * - `oversized`: the answer is `bytes` bytes of JSON (whitespace inside `{"results":[ … ]}`), streamed with
 *   backpressure; with `announce`, `content-length` says so up front. `streamed()` tells how much was sent.
 */
export type HostileListing =
  | { readonly kind: "repeat-cursor"; readonly on?: "pages" | "spaces" }
  | { readonly kind: "endless"; readonly on?: "pages" | "spaces" }
  | {
      readonly kind: "oversized";
      readonly on?: "pages" | "spaces";
      readonly bytes: number;
      readonly announce?: boolean;
    };

/** One oversized answer, once its connection closed. */
export interface StreamedAnswer {
  /** Bytes handed to the socket (with backpressure: at most one chunk more than the kernel took). */
  readonly bytesWritten: number;
  /** The client closed the connection before the whole answer was sent. */
  readonly closedEarly: boolean;
}

export interface FakeWikiOptions {
  /** The account's email; default `svc-fake@example.test`. */
  readonly email?: string;
  /** The account's API token; default `fake-api-token-0123456789`. */
  readonly token?: string;
  /** Default: one readable space `SVC`. */
  readonly spaces?: readonly FakeWikiSpaceSpec[];
  /**
   * What `_links.base` and the `rel="base"` link say. `"hostile"` (default): a second loopback server that
   * counts its hits. `"self"`: this server's `/wiki`, like the vendor. Anything else is sent as is.
   */
  readonly linksBase?: string;
  /**
   * The status for pages of a `denied` space. 403 is what Document 3 says; the vendor's reference documents
   * 404 ("does not have permission to view … or was not found") for the page endpoints.
   */
  readonly deniedStatus?: 403 | 404;
  /** Requests per window before the fake's own limiter answers 429; default 10,000 (never, in practice). */
  readonly rateLimitQuota?: number;
  readonly rateLimitWindowMs?: number;
  /** Id of the first page created; default 1, so globs like `pages/12*` select a known subset. */
  readonly firstPageId?: number;
  /** Clock for timestamps of live changes (ms since the epoch); default `Date.now`. */
  readonly now?: () => number;
  /** Default: none, every listing is honest. `setHostileListing` changes it later. */
  readonly hostileListing?: HostileListing;
}

export interface FakeWikiVersion {
  readonly number: number;
  /** RFC 3339 UTC with milliseconds, as the vendor writes it. */
  readonly createdAt: string;
  readonly message: string;
  readonly minorEdit: boolean;
  readonly authorId: string;
}

/** The server's state of one page (a copy; changing it changes nothing). */
export interface FakeWikiPage {
  readonly id: string;
  readonly status: PageStatus;
  readonly title: string;
  readonly spaceId: string;
  readonly parentId: string | null;
  readonly parentType: "page" | null;
  readonly position: number | null;
  readonly authorId: string;
  readonly ownerId: string;
  readonly lastOwnerId: string | null;
  readonly createdAt: string;
  readonly version: FakeWikiVersion;
  /** `body.storage.value`, byte for byte. */
  readonly body: string;
}

export interface FakeWikiSpace {
  readonly id: string;
  readonly key: string;
  readonly alias: string;
  readonly name: string;
  readonly type: SpaceType;
  readonly status: "current" | "archived";
  readonly description: string;
  readonly homepageId: string | null;
  readonly denied: boolean;
  readonly createdAt: string;
}

export interface FakeWikiRequest {
  readonly method: string;
  /** Path and query exactly as sent, e.g. `/wiki/api/v2/spaces?keys=SVC`. */
  readonly path: string;
  /** Header names in lower case; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** The status answered; 0 while the request is in flight. */
  readonly status: number;
  /** The body answered (utf8); empty while in flight, when there was none, or for a streamed answer. */
  readonly answer: string;
  /** When the request arrived (`Date.now()`, not the `now` option: the real clock, for waits). */
  readonly receivedAt: number;
}

export interface PageChanges {
  readonly title?: string;
  readonly body?: string;
  readonly message?: string;
  readonly parentId?: string | null;
}

export interface FakeWiki {
  /** The tenant base URL to configure (`SVC_WIKI_BASE_URL`): `http://127.0.0.1:<port>`, no path. */
  readonly url: string;
  /** The origin to put on the egress allowlist (same string as `url`). */
  readonly origin: string;
  /** `<url>/wiki/api/v2`. */
  readonly apiBase: string;
  /** What `_links.base` says. */
  readonly linksBase: string;
  readonly credentials: { readonly email: string; readonly token: string };
  /** `Basic base64(email:token)` for the configured account. */
  readonly authorization: string;
  /** Every request this server received, oldest first. */
  readonly requests: readonly FakeWikiRequest[];
  /** Requests received by the hostile `_links.base` server (0 unless someone followed `_links.base`). */
  readonly baseHits: number;
  readonly baseRequests: readonly FakeWikiRequest[];
  /**
   * Answers the next `count` requests with 429, `Retry-After: <retryAfterSeconds>` and
   * `x-ratelimit-remaining: 0`, before authentication is checked.
   */
  setRateLimit(count: number, retryAfterSeconds: number): void;
  /** From now on, the listing it names is hostile (`undefined`: honest again). */
  setHostileListing(listing: HostileListing | undefined): void;
  /** Every `oversized` answer so far, once its connection has closed. */
  streamed(): Promise<StreamedAnswer[]>;
  /** Creates `count` current pages with tricky storage bodies in the space; returns their ids in order. */
  seedPages(spaceKey: string, count: number): string[];
  /** Creates one current page (version 1) server-side. */
  createPage(spaceKey: string, page: { title: string; body: string; parentId?: string | null }): FakeWikiPage;
  /** Someone else edits the page in the browser: version + 1 with a fresh `version.createdAt`. */
  editPage(id: string, changes?: PageChanges): FakeWikiPage;
  /** Someone else deletes the page: it moves to the trash. */
  trashPage(id: string): void;
  /** Someone else archives the page (status `archived`). */
  archivePage(id: string): void;
  /** Someone labels the page (global prefix), as the v1 label endpoint does. */
  labelPage(id: string, name: string): void;
  /** The page's label names, in the order they were added. */
  labels(id: string): string[];
  page(id: string): FakeWikiPage | undefined;
  /** The space's pages by id; trashed ones only with `includeTrashed`. */
  pages(spaceKey: string, options?: { includeTrashed?: boolean }): FakeWikiPage[];
  space(keyOrAlias: string): FakeWikiSpace;
  /**
   * Every exchange judged against the vendor's description as it happened (testing/vendor-contract.ts);
   * `close()` fails naming each departure.
   */
  readonly contract: ContractWatch;
  /** Closes the server; rejects, naming them, when any exchange departed from the vendor's description. */
  close(): Promise<void>;
}

/** `Authorization` header value for Basic authentication. */
export function basicAuthorization(email: string, token: string): string {
  return `Basic ${Buffer.from(`${email}:${token}`, "utf8").toString("base64")}`;
}

/** The vendor's v2 error envelope (third-party recordings; the OpenAPI document gives error bodies no schema). */
export interface VendorErrorBody {
  readonly errors: readonly {
    readonly status: number;
    readonly code: string;
    readonly title: string;
    readonly detail: string | null;
  }[];
}

const ACCOUNT_ID = "712020:5f0c2a9e-7d41-4b8e-9a53-fa4e00000001";
const SEED_EPOCH = Date.UTC(2025, 0, 6, 9, 0, 0, 0);
const DEFAULT_LIMIT = 25;
const MAX_LIMIT = 250;
const MAX_BODY_BYTES = 5 * 1024 * 1024;
const PAGE_SORTS = ["id", "created-date", "modified-date", "title"] as const;
const SPACE_SORTS = ["id", "key", "name"] as const;
const PAGE_STATUSES = ["current", "archived", "deleted", "trashed"] as const;
const BODY_FORMATS = ["storage", "atlas_doc_format"] as const;
const SINGLE_BODY_FORMATS = [
  "storage",
  "atlas_doc_format",
  "view",
  "export_view",
  "anonymous_export_view",
  "styled_view",
  "editor",
] as const;
/**
 * What the vendor answers to Basic credentials it does not accept (recorded in kovetskiy/mark#146 and
 * justmiles/go-markdown2confluence#47; text/plain, trailing newline included).
 */
const BASIC_REJECTED =
  "Basic authentication with passwords is deprecated.  For more information, see: " +
  "https://developer.atlassian.com/cloud/confluence/deprecation-notice-basic-auth/\n";

/**
 * Storage-format bodies that break naive handling: a code macro whose CDATA holds a YAML frontmatter block and
 * a split `]]>`, entities, non-ASCII text, a body that starts with a `---` line, CRLF, trailing blank lines,
 * and the empty body.
 */
const TRICKY_BODIES: readonly ((n: number) => string)[] = [
  (n) => `<p>Page ${n}: a plain paragraph.</p>`,
  (n) =>
    `<h1>Code ${n}</h1><ac:structured-macro ac:name="code" ac:schema-version="1" ac:macro-id="c0de${n}">` +
    `<ac:parameter ac:name="language">yaml</ac:parameter><ac:plain-text-body><![CDATA[---\nid: ${n}\n` +
    `version: 99\n---\nif (a < b && c > d) { return "]]]]><![CDATA[>"; }\n]]></ac:plain-text-body>` +
    `</ac:structured-macro>`,
  (n) =>
    `<p>Entities ${n}: &amp; &lt;tag&gt; &quot;quoted&quot; &#39;single&#39; &nbsp;&mdash;&#8212;&#x1F600;</p>`,
  (n) => `<p>Unicode ${n}: naïve café — 日本語のテキスト — עברית — 🧪🚀 — e\u0301 — zero\u200bwidth</p>`,
  (n) => `---\n<p>Page ${n} starts with a YAML fence line.</p>\n---\n<p>and has a second one.</p>`,
  (n) =>
    `<ac:structured-macro ac:name="info" ac:schema-version="1"><ac:rich-text-body><p>Info ${n} with ` +
    `<ac:link><ri:page ri:content-title="Tom &amp; Jerry" /></ac:link></p></ac:rich-text-body>` +
    `</ac:structured-macro><table><tbody><tr><th>k</th><td>${n}</td></tr></tbody></table>`,
  (n) => `<p>Windows line ending ${n}</p>\r\n<p>second line</p>`,
  (n) => `<p>Trailing whitespace ${n}   </p>\n\n\n`,
  () => "",
];

const TRICKY_TITLES: readonly ((n: string) => string)[] = [
  (n) => `Page ${n}`,
  (n) => `Design / "Notes" #${n}`,
  (n) => `Übersicht ${n} — 日本語`,
  (n) => `---: ${n}`,
];

interface Space {
  readonly id: string;
  readonly key: string;
  readonly alias: string;
  readonly name: string;
  readonly type: SpaceType;
  readonly status: "current" | "archived";
  readonly description: string;
  homepageId: string | null;
  readonly denied: boolean;
  readonly createdAt: string;
}

interface Page {
  readonly id: string;
  status: PageStatus;
  title: string;
  readonly spaceId: string;
  parentId: string | null;
  position: number | null;
  readonly authorId: string;
  readonly ownerId: string;
  readonly createdAt: string;
  version: FakeWikiVersion;
  body: string;
}

interface Answer {
  readonly status: number;
  readonly headers?: Record<string, string>;
  /** An object is sent as JSON; a string as text/plain; undefined sends no body. */
  readonly body?: unknown;
  /** Instead of `body`: this many bytes of JSON, streamed (a hostile `oversized` listing). */
  readonly stream?: { readonly bytes: number; readonly announce: boolean };
  /** Why this answer departs from the vendor's description on purpose (a fault a test injects). */
  readonly deliberate?: string;
}

class HttpFailure extends Error {
  constructor(readonly answer: Answer) {
    super(`HTTP ${answer.status}`);
  }
}

function vendorError(status: number, code: string, title: string, detail: string | null = null): Answer {
  const body: VendorErrorBody = { errors: [{ status, code, title, detail }] };
  return { status, body };
}

function fail(status: number, code: string, title: string, detail: string | null = null): never {
  throw new HttpFailure(vendorError(status, code, title, detail));
}

/** The fake's own gaps (valid vendor requests it does not model) fail loudly, never silently. */
function notModelled(what: string): never {
  fail(400, "BAD_REQUEST", "Not supported by the fake wiki", what);
}

function rfc3339(ms: number): string {
  return new Date(ms).toISOString();
}

/** `X-RateLimit-Reset` as the vendor documents it: `yyyy-MM-ddTHH:mmZ`. */
function resetStamp(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16)}Z`;
}

/** Values of a query parameter given as a comma-separated list, repeated, or both. */
function listParam(params: URLSearchParams, name: string): string[] {
  return params
    .getAll(name)
    .flatMap((value) => value.split(","))
    .map((value) => value.trim())
    .filter((value) => value !== "");
}

function oneOf<T extends string>(value: string, allowed: readonly T[], name: string): T {
  if (!(allowed as readonly string[]).includes(value)) {
    fail(400, "INVALID_REQUEST_PARAMETER", `Invalid value for '${name}': ${value}`);
  }
  return value as T;
}

function parseLimit(params: URLSearchParams): number {
  const raw = params.get("limit");
  if (raw === null) return DEFAULT_LIMIT;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1) {
    fail(400, "INVALID_REQUEST_PARAMETER", `'limit' must be an integer between 1 and ${MAX_LIMIT}: ${raw}`);
  }
  // ASSUMPTION: above the documented maximum the vendor clamps rather than refusing.
  return Math.min(Number(raw), MAX_LIMIT);
}

function parseId(raw: string, what: string): string {
  if (!/^\d{1,18}$/.test(raw)) fail(400, "INVALID_REQUEST_PARAMETER", `'id' must be a ${what} id: ${raw}`);
  return String(BigInt(raw));
}

type SortValue = string | number;
interface CursorPosition {
  readonly sort: string;
  readonly value: SortValue;
  readonly id: number;
}

function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify(position), "utf8").toString("base64url");
}

function decodeCursor(raw: string, sort: string): CursorPosition {
  try {
    const position = JSON.parse(Buffer.from(raw, "base64url").toString("utf8")) as CursorPosition;
    if (position.sort === sort && typeof position.id === "number") return position;
  } catch {
    // falls through to the 400 below
  }
  return fail(400, "INVALID_REQUEST_PARAMETER", "Invalid cursor");
}

function compareValues(a: SortValue, b: SortValue): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}

/**
 * Keyset pagination: the cursor names the last item's (sort value, id), so items added or edited during a walk
 * never shift the pages that follow the way an offset would.
 */
function paginate<T>(
  items: readonly T[],
  params: URLSearchParams,
  sortParam: string,
  sortValue: (item: T) => SortValue,
  idOf: (item: T) => number,
): { page: T[]; next: CursorPosition | undefined } {
  const descending = sortParam.startsWith("-");
  const direction = descending ? -1 : 1;
  const compare = (a: { value: SortValue; id: number }, b: { value: SortValue; id: number }) =>
    direction * (compareValues(a.value, b.value) || a.id - b.id);
  const keyed = items.map((item) => ({ item, value: sortValue(item), id: idOf(item) }));
  keyed.sort(compare);
  const rawCursor = params.get("cursor");
  const after = rawCursor === null ? undefined : decodeCursor(rawCursor, sortParam);
  const remaining = after === undefined ? keyed : keyed.filter((entry) => compare(entry, after) > 0);
  const limit = parseLimit(params);
  const page = remaining.slice(0, limit);
  const last = page.at(-1);
  const next =
    remaining.length > limit && last ? { sort: sortParam, value: last.value, id: last.id } : undefined;
  return { page: page.map((entry) => entry.item), next };
}

/** The relative next URL: the request's own path and query with the cursor replaced (last, as the vendor does). */
function nextUrl(url: URL, cursor: CursorPosition): string {
  const params = new URLSearchParams(url.searchParams);
  params.delete("cursor");
  params.append("cursor", encodeCursor(cursor));
  return `${url.pathname}?${params.toString()}`;
}

function titleSlug(title: string): string {
  return encodeURIComponent(title).replace(/%20/g, "+");
}

/** The vendor's tiny links encode the content id little-endian in base64url. */
function tinyLink(id: string): string {
  let value = BigInt(id);
  const bytes: number[] = [];
  while (value > 0n) {
    bytes.push(Number(value & 0xffn));
    value >>= 8n;
  }
  return `/x/${Buffer.from(bytes).toString("base64url")}`;
}

function flatHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

/** The request body, or `undefined` when it is over the vendor's 5 MB limit (the rest is read and dropped). */
function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on("end", () => resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function send(res: ServerResponse, answer: Answer): void {
  const headers: Record<string, string> = { ...answer.headers };
  let payload: Buffer | undefined;
  if (typeof answer.body === "string") {
    payload = Buffer.from(answer.body, "utf8");
    headers["content-type"] ??= "text/plain;charset=UTF-8";
  } else if (answer.body !== undefined) {
    payload = Buffer.from(JSON.stringify(answer.body), "utf8");
    headers["content-type"] ??= "application/json;charset=UTF-8";
  }
  if (payload) headers["content-length"] = String(payload.length);
  res.writeHead(answer.status, headers);
  res.end(payload);
}

/** Sends `{"results":[` + whitespace + `]}`, `bytes` in all, with backpressure, until done or hung up on. */
function streamJson(
  res: ServerResponse,
  answer: Answer,
  bytes: number,
  announce: boolean,
): Promise<StreamedAnswer> {
  const chunk = Buffer.alloc(64 * 1024, " ");
  const head = Buffer.from('{"results":[');
  const tail = Buffer.from("]}");
  let written = 0;
  return new Promise((resolve) => {
    res.on("error", () => {});
    res.on("close", () => resolve({ bytesWritten: written, closedEarly: !res.writableFinished }));
    res.writeHead(answer.status, {
      ...answer.headers,
      "content-type": "application/json;charset=UTF-8",
      ...(announce ? { "content-length": String(bytes) } : {}),
    });
    written += head.length;
    res.write(head);
    const pump = () => {
      while (!res.destroyed) {
        const left = bytes - written - tail.length;
        if (left <= 0) {
          written += tail.length;
          res.end(tail);
          return;
        }
        const piece = left < chunk.length ? chunk.subarray(0, left) : chunk;
        written += piece.length;
        if (!res.write(piece)) {
          res.once("drain", pump);
          return;
        }
      }
    };
    pump();
  });
}

interface Logged {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  status: number;
  answer: string;
  receivedAt: number;
}

/** Starts the fake on `127.0.0.1:0` (and, unless `linksBase` says otherwise, the hostile base server). */
export async function startFakeWiki(options: FakeWikiOptions = {}): Promise<FakeWiki> {
  const email = options.email ?? "svc-fake@example.test";
  const token = options.token ?? "fake-api-token-0123456789";
  const deniedStatus = options.deniedStatus ?? 403;
  const quota = options.rateLimitQuota ?? 10_000;
  const windowMs = options.rateLimitWindowMs ?? 60_000;
  const clock = options.now ?? Date.now;

  const spaces: Space[] = [];
  const pages = new Map<string, Page>();
  /** Page id → label names (global prefix); the v2 API reads them, only the v1 API adds them. */
  const pageLabels = new Map<string, string[]>();
  let nextLabelId = 9000;
  const labelIds = new Map<string, number>();
  let nextPageId = options.firstPageId ?? 1;
  let nextSpaceId = 98_305;
  let seeded = 0;
  let lastStamp = 0;
  /** A strictly increasing clock, so two changes in one millisecond still order. */
  const stamp = () => {
    lastStamp = Math.max(clock(), lastStamp + 1);
    return rfc3339(lastStamp);
  };

  const requests: Logged[] = [];
  const contract = new ContractWatch("confluence");
  const baseRequests: Logged[] = [];
  let forced429 = 0;
  let forcedRetryAfter = 1;
  let hostileListing = options.hostileListing;
  const streams: Promise<StreamedAnswer>[] = [];
  let windowStart = 0;
  let windowCount = 0;

  function findSpace(keyOrAlias: string): Space {
    const space = spaces.find((s) => s.key === keyOrAlias) ?? spaces.find((s) => s.alias === keyOrAlias);
    if (!space) throw new Error(`the fake wiki has no space ${JSON.stringify(keyOrAlias)}`);
    return space;
  }

  function spaceById(id: string): Space | undefined {
    return spaces.find((s) => s.id === id);
  }

  function siblingsCount(spaceId: string, parentId: string | null): number {
    let count = 0;
    for (const page of pages.values()) {
      if (page.spaceId === spaceId && page.parentId === parentId && page.status !== "trashed") count++;
    }
    return count;
  }

  function titleTaken(spaceId: string, title: string, exceptId?: string): boolean {
    for (const page of pages.values()) {
      if (
        page.spaceId === spaceId &&
        page.title === title &&
        page.status !== "trashed" &&
        page.id !== exceptId
      ) {
        return true;
      }
    }
    return false;
  }

  function insertPage(
    space: Space,
    fields: { title: string; body: string; parentId: string | null; createdAt: string; version?: number },
  ): Page {
    const id = String(nextPageId++);
    const page: Page = {
      id,
      status: "current",
      title: fields.title,
      spaceId: space.id,
      parentId: fields.parentId,
      position: siblingsCount(space.id, fields.parentId),
      authorId: ACCOUNT_ID,
      ownerId: ACCOUNT_ID,
      createdAt: fields.createdAt,
      version: {
        number: fields.version ?? 1,
        createdAt: fields.createdAt,
        message: "",
        minorEdit: false,
        authorId: ACCOUNT_ID,
      },
      body: fields.body,
    };
    pages.set(id, page);
    return page;
  }

  for (const spec of options.spaces ?? [{ key: "SVC", name: "svc test space" }]) {
    if (spaces.some((s) => s.key === spec.key || s.alias === (spec.alias ?? spec.key))) {
      throw new Error(`the fake wiki got space ${spec.key} twice`);
    }
    const space: Space = {
      id: String(nextSpaceId++),
      key: spec.key,
      alias: spec.alias ?? spec.key,
      name: spec.name ?? `${spec.key} space`,
      type: spec.type ?? "global",
      status: spec.status ?? "current",
      description: spec.description ?? "",
      homepageId: null,
      denied: spec.denied ?? false,
      createdAt: rfc3339(SEED_EPOCH - 86_400_000),
    };
    spaces.push(space);
    if (spec.homepage) {
      space.homepageId = insertPage(space, {
        title: `${space.name} Home`,
        body: `<p>Welcome to ${space.name}.</p>`,
        parentId: null,
        createdAt: space.createdAt,
      }).id;
    }
  }

  let hostile: Server | undefined;
  let hostileOrigin = "";
  if (options.linksBase === undefined || options.linksBase === "hostile") {
    hostile = createServer((req, res) => {
      const entry: Logged = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: flatHeaders(req),
        body: "",
        status: 200,
        answer: "",
        receivedAt: Date.now(),
      };
      baseRequests.push(entry);
      req.resume();
      // Looks like a harmless empty listing, so a client that follows it fails quietly, not loudly: only the
      // hit counter gives it away.
      send(res, { status: 200, body: { results: [], _links: {} } });
    });
    hostileOrigin = await listenOnLoopback(hostile);
  }

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      send(res, vendorError(500, "INTERNAL_SERVER_ERROR", "Internal Server Error", String(error)));
    });
  });
  let origin: string;
  try {
    origin = await listenOnLoopback(server);
  } catch (error) {
    if (hostile) await closeServer(hostile);
    throw error;
  }
  const requestedBase = options.linksBase ?? "hostile";
  const linksBase =
    requestedBase === "hostile"
      ? `${hostileOrigin}/wiki`
      : requestedBase === "self"
        ? `${origin}/wiki`
        : requestedBase;

  /**
   * SpaceBulk. `homepageId`, `description` and `icon` are not nullable in the description: a member with
   * nothing to say is left out (the description only when `description-format` asks for it, the icon only
   * with `include-icon=true`), never sent as null.
   */
  function spaceJson(space: Space, params: URLSearchParams): Record<string, unknown> {
    const descriptionFormat = params.get("description-format");
    if (descriptionFormat !== null) oneOf(descriptionFormat, ["plain", "view"], "description-format");
    return {
      id: space.id,
      key: space.key,
      name: space.name,
      type: space.type,
      status: space.status,
      authorId: ACCOUNT_ID,
      createdAt: space.createdAt,
      ...(space.homepageId === null ? {} : { homepageId: space.homepageId }),
      ...(descriptionFormat === "plain"
        ? { description: { plain: { representation: "plain", value: space.description } } }
        : descriptionFormat === "view"
          ? { description: { view: { representation: "view", value: `<p>${space.description}</p>` } } }
          : {}),
      ...(params.get("include-icon") === "true"
        ? {
            icon: {
              path: `/wiki/aa-avatar/space/${space.key}`,
              apiDownloadLink: `/wiki/download/space/${space.key}`,
            },
          }
        : {}),
      spaceOwnerId: ACCOUNT_ID,
      currentActiveAlias: space.alias,
      _links: { webui: `/spaces/${space.alias}` },
    };
  }

  function pageJson(page: Page, bodyFormat: string | null, single: boolean): Record<string, unknown> {
    const space = spaceById(page.spaceId);
    let body: Record<string, unknown> = {};
    if (bodyFormat === "storage") body = { storage: { representation: "storage", value: page.body } };
    else if (bodyFormat !== null)
      notModelled(`body-format=${bodyFormat}: the fake keeps storage bodies only`);
    const links: Record<string, string> = {
      editui: `/pages/resumedraft.action?draftId=${page.id}`,
      webui: `/spaces/${space?.alias ?? ""}/pages/${page.id}/${titleSlug(page.title)}`,
      tinyui: tinyLink(page.id),
    };
    if (single) links.base = linksBase;
    return {
      parentType: page.parentId === null ? null : "page",
      parentId: page.parentId,
      ownerId: page.ownerId,
      lastOwnerId: null,
      createdAt: page.createdAt,
      authorId: page.authorId,
      position: page.position,
      version: { ...page.version },
      body,
      status: page.status,
      title: page.title,
      spaceId: page.spaceId,
      id: page.id,
      _links: links,
    };
  }

  function listing(url: URL, results: unknown[], next: CursorPosition | undefined): Answer {
    const links: Record<string, string> = {};
    const headers: Record<string, string> = {};
    if (next) {
      links.next = nextUrl(url, next);
      headers.link = `<${links.next}>; rel="next", <${linksBase}>; rel="base"`;
    }
    links.base = linksBase;
    return { status: 200, headers, body: { results, _links: links } };
  }

  function readablePage(id: string, statuses: readonly string[]): Page {
    const page = pages.get(id);
    if (!page || !statuses.includes(page.status)) fail(404, "NOT_FOUND", "Not Found");
    guardSpace(spaceById(page.spaceId));
    return page;
  }

  function guardSpace(space: Space | undefined): asserts space is Space {
    if (!space) fail(404, "NOT_FOUND", "Not Found");
    if (space.denied) {
      if (deniedStatus === 404) fail(404, "NOT_FOUND", "Not Found");
      throw new HttpFailure({
        ...vendorError(403, "FORBIDDEN", "You do not have permission to view or edit content in this space"),
        // The test chose Document 3's status over the description's (which documents 404 here).
        deliberate:
          "a denied space answering 403, as Document 3 says (deniedStatus: 404 is the description's)",
      });
    }
  }

  function parseJsonBody(text: string, contentType: string | undefined): unknown {
    if (!/^application\/json\b/i.test(contentType ?? "")) {
      fail(415, "UNSUPPORTED_MEDIA_TYPE", "Unsupported Media Type", "Content-Type must be application/json");
    }
    try {
      return JSON.parse(text);
    } catch {
      return fail(400, "INVALID_REQUEST_PARAMETER", "Could not parse the request body as JSON");
    }
  }

  function parseJsonObject(text: string, contentType: string | undefined): Record<string, unknown> {
    const parsed = parseJsonBody(text, contentType);
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      fail(400, "INVALID_REQUEST_PARAMETER", "The request body must be a JSON object");
    }
    return parsed as Record<string, unknown>;
  }

  /** `body` as PageBodyWrite (`{representation, value}`) or PageNestedBodyWrite (`{storage: {…}}`). */
  function storageBody(body: unknown): string {
    if (body === undefined) return "";
    if (body === null || typeof body !== "object")
      fail(400, "INVALID_REQUEST_PARAMETER", "'body' must be an object");
    const record = body as Record<string, unknown>;
    const write = (record.storage ?? record) as Record<string, unknown>;
    const representation = write.representation;
    if (representation !== "storage") {
      if (
        representation === "atlas_doc_format" ||
        representation === "wiki" ||
        record.atlas_doc_format ||
        record.wiki
      ) {
        notModelled(`body representation ${String(representation)}: the fake stores storage bodies only`);
      }
      fail(
        400,
        "INVALID_REQUEST_PARAMETER",
        "'body.representation' must be one of storage, atlas_doc_format, wiki",
      );
    }
    if (typeof write.value !== "string")
      fail(400, "INVALID_REQUEST_PARAMETER", "'body.value' must be a string");
    return write.value;
  }

  function checkParent(space: Space, parentId: unknown, selfId?: string): string | null {
    if (parentId === undefined || parentId === null) return space.homepageId;
    if (typeof parentId !== "string" && typeof parentId !== "number") {
      fail(400, "INVALID_REQUEST_PARAMETER", "'parentId' must be a string");
    }
    const parent = pages.get(String(parentId));
    if (!parent || parent.spaceId !== space.id || parent.status === "trashed" || parent.id === selfId) {
      fail(404, "NOT_FOUND", "Not Found", `parent page ${String(parentId)} not found in space ${space.key}`);
    }
    return parent.id;
  }

  function getSpaces(url: URL): Answer {
    const params = url.searchParams;
    const ids = listParam(params, "ids");
    const keys = listParam(params, "keys");
    if (ids.length > 250 || keys.length > 250)
      fail(400, "INVALID_REQUEST_PARAMETER", "At most 250 ids or keys");
    const type = params.get("type");
    if (type !== null) oneOf(type, ["global", "collaboration", "knowledge_base", "personal"], "type");
    const status = params.get("status");
    if (status !== null) oneOf(status, ["current", "archived"], "status");
    const sort = params.get("sort") ?? "id";
    const field = oneOf(sort.replace(/^-/, ""), SPACE_SORTS, "sort");
    const matching = spaces.filter(
      (space) =>
        (ids.length === 0 || ids.includes(space.id)) &&
        // ASSUMPTION: the reference says only "filter … based on their keys". Document 3 says the lookup
        // also matches an active alias, so `keys=<alias>` finds the space too.
        (keys.length === 0 || keys.includes(space.key) || keys.includes(space.alias)) &&
        (type === null || space.type === type) &&
        (status === null || space.status === status),
    );
    const { page, next } = paginate(
      matching,
      params,
      sort,
      (space) => (field === "id" ? Number(space.id) : field === "key" ? space.key : space.name),
      (space) => Number(space.id),
    );
    return listing(
      url,
      page.map((space) => spaceJson(space, params)),
      next,
    );
  }

  function getSpace(url: URL, rawId: string): Answer {
    const space = spaceById(parseId(rawId, "space"));
    if (!space) fail(404, "NOT_FOUND", "Not Found");
    return {
      status: 200,
      body: {
        ...spaceJson(space, url.searchParams),
        _links: { webui: `/spaces/${space.alias}`, base: linksBase },
      },
    };
  }

  function getSpacePages(url: URL, rawId: string): Answer {
    const params = url.searchParams;
    const space = spaceById(parseId(rawId, "space"));
    guardSpace(space);
    const sort = params.get("sort") ?? "id";
    const field = oneOf(sort.replace(/^-/, ""), PAGE_SORTS, "sort");
    const statuses = listParam(params, "status").map((s) => oneOf(s, PAGE_STATUSES, "status"));
    const wanted: readonly string[] = statuses.length > 0 ? statuses : ["current", "archived"];
    const depth = oneOf(params.get("depth") ?? "all", ["all", "root"], "depth");
    const title = params.get("title");
    const bodyFormat = params.get("body-format");
    if (bodyFormat !== null) oneOf(bodyFormat, BODY_FORMATS, "body-format");
    const matching = [...pages.values()].filter(
      (page) =>
        page.spaceId === space.id &&
        wanted.includes(page.status) &&
        (depth === "all" || page.parentId === null || page.parentId === space.homepageId) &&
        (title === null || page.title === title),
    );
    const { page, next } = paginate(
      matching,
      params,
      sort,
      (p) =>
        field === "id"
          ? Number(p.id)
          : field === "created-date"
            ? p.createdAt
            : field === "modified-date"
              ? p.version.createdAt
              : p.title,
      (p) => Number(p.id),
    );
    return listing(
      url,
      page.map((p) => pageJson(p, bodyFormat, false)),
      next,
    );
  }

  function getPage(url: URL, rawId: string): Answer {
    const params = url.searchParams;
    const id = parseId(rawId, "page");
    const bodyFormat = params.get("body-format");
    if (bodyFormat !== null) oneOf(bodyFormat, SINGLE_BODY_FORMATS, "body-format");
    if (params.has("version")) notModelled("?version=: the fake keeps no page history");
    if (params.get("get-draft") === "true") notModelled("?get-draft=true: the fake has no drafts");
    const statuses = listParam(params, "status");
    // ASSUMPTION: like the listings, a page is found in status current or archived unless `status` says more.
    const page = readablePage(id, statuses.length > 0 ? statuses : ["current", "archived"]);
    return { status: 200, body: pageJson(page, bodyFormat, true) };
  }

  function createPageRequest(url: URL, text: string, contentType: string | undefined): Answer {
    const input = parseJsonObject(text, contentType);
    if (typeof input.spaceId !== "string" && typeof input.spaceId !== "number") {
      fail(400, "INVALID_REQUEST_PARAMETER", "'spaceId' is required");
    }
    const status = input.status ?? "current";
    if (status === "draft") notModelled("status draft: the fake has no drafts");
    if (status !== "current") fail(400, "INVALID_REQUEST_PARAMETER", "'status' must be current or draft");
    if (typeof input.title !== "string" || input.title.trim() === "") {
      fail(400, "INVALID_REQUEST_PARAMETER", "'title' is required for a page that is not a draft");
    }
    const space = spaceById(String(input.spaceId));
    guardSpace(space);
    const body = storageBody(input.body);
    const rootLevel = url.searchParams.get("root-level") === "true";
    if (rootLevel && input.parentId !== undefined && input.parentId !== null) {
      fail(400, "INVALID_REQUEST_PARAMETER", "'parentId' may not be given with root-level=true");
    }
    const parentId = rootLevel ? null : checkParent(space, input.parentId);
    // The vendor keeps page titles unique within a space.
    if (titleTaken(space.id, input.title)) {
      fail(
        400,
        "INVALID_REQUEST_PARAMETER",
        "A page with this title already exists",
        `title: ${input.title}`,
      );
    }
    const page = insertPage(space, { title: input.title, body, parentId, createdAt: stamp() });
    return { status: 200, body: pageJson(page, "storage", true) };
  }

  function updatePageRequest(rawId: string, text: string, contentType: string | undefined): Answer {
    const id = parseId(rawId, "page");
    const input = parseJsonObject(text, contentType);
    const missing = ["id", "status", "title", "body", "version"].filter((name) => input[name] === undefined);
    if (missing.length > 0)
      fail(400, "INVALID_REQUEST_PARAMETER", `Missing required fields: ${missing.join(", ")}`);
    if (String(input.id) !== id)
      fail(400, "INVALID_REQUEST_PARAMETER", "'id' does not match the page in the path");
    if (input.status === "draft") notModelled("status draft: the fake has no drafts");
    if (input.status !== "current")
      fail(400, "INVALID_REQUEST_PARAMETER", "'status' must be current or draft");
    if (typeof input.title !== "string" || input.title.trim() === "") {
      fail(400, "INVALID_REQUEST_PARAMETER", "'title' must be a non-empty string");
    }
    const version = input.version as { number?: unknown; message?: unknown } | null;
    if (version === null || typeof version !== "object" || !Number.isInteger(version.number)) {
      fail(400, "INVALID_REQUEST_PARAMETER", "'version.number' must be an integer");
    }
    const page = readablePage(id, ["current", "archived", "trashed"]);
    const space = spaceById(page.spaceId) as Space;
    if (input.spaceId !== undefined && String(input.spaceId) !== page.spaceId) {
      fail(400, "INVALID_REQUEST_PARAMETER", "Moving a page to a different space is not supported");
    }
    const body = storageBody(input.body);
    if (version.number !== page.version.number + 1) {
      // Recorded vendor answer (third-party tests of v2 clients); the OpenAPI document lists no 409 at all.
      fail(
        409,
        "CONFLICT",
        `Version must be incremented when updating a page. Current Version: [${page.version.number}]. ` +
          `Provided version: [${String(version.number)}]`,
      );
    }
    const message = typeof version.message === "string" ? version.message : "";
    if (page.status === "trashed") {
      // The reference: restoring a trashed page changes only its status, never its content.
      page.status = "current";
    } else {
      const parentId = "parentId" in input ? checkParent(space, input.parentId, page.id) : page.parentId;
      if (titleTaken(space.id, input.title, page.id)) {
        fail(
          400,
          "INVALID_REQUEST_PARAMETER",
          "A page with this title already exists",
          `title: ${input.title}`,
        );
      }
      page.title = input.title;
      page.body = body;
      if (parentId !== page.parentId) {
        page.parentId = parentId;
        page.position = siblingsCount(space.id, parentId);
      }
    }
    page.version = {
      number: page.version.number + 1,
      createdAt: stamp(),
      message,
      minorEdit: false,
      authorId: ACCOUNT_ID,
    };
    return { status: 200, body: pageJson(page, "storage", true) };
  }

  function labelJson(name: string): { id: string; name: string; prefix: string } {
    if (!labelIds.has(name)) labelIds.set(name, nextLabelId++);
    return { id: String(labelIds.get(name)), name, prefix: "global" };
  }

  function addLabel(pageId: string, name: string): void {
    const names = pageLabels.get(pageId) ?? [];
    if (!names.includes(name)) names.push(name);
    pageLabels.set(pageId, names);
  }

  function v1LabelsAnswer(pageId: string): Answer {
    const results = (pageLabels.get(pageId) ?? []).map((name) => {
      const label = labelJson(name);
      return { prefix: label.prefix, name, id: label.id, label: name };
    });
    return { status: 200, body: { results, start: 0, limit: 200, size: results.length, _links: {} } };
  }

  /** v1 `POST /wiki/rest/api/content/{id}/label`: a JSON array of `{prefix, name}` (or one such object). */
  function addLabelsRequest(rawId: string, text: string, contentType: string | undefined): Answer {
    const page = readablePage(parseId(rawId, "content"), ["current", "archived"]);
    const parsed = parseJsonBody(text, contentType);
    const items = Array.isArray(parsed) ? parsed : [parsed];
    const names = items.map((item) => {
      const name = (item as { name?: unknown } | null)?.name;
      // ASSUMPTION: the product lower-cases labels and refuses spaces and empty names.
      if (typeof name !== "string" || name.trim() === "" || /\s/.test(name)) {
        fail(400, "INVALID_REQUEST_PARAMETER", "Each label needs a non-empty name without spaces");
      }
      return name.toLowerCase();
    });
    for (const name of names) addLabel(page.id, name);
    return v1LabelsAnswer(page.id);
  }

  /**
   * ASSUMPTION: moving a page to the trash (or archiving it) makes no version, so its modified date stays its
   * last edit's; the reference does not say. (The harder case for a client: a page trashed just now can sort
   * after pages edited later.)
   */
  function trash(page: Page): void {
    page.status = "trashed";
    // ASSUMPTION: children move up to the trashed page's parent (versions unchanged), as deleting a parent
    // does in the product; the reference does not say.
    for (const child of pages.values()) {
      if (child.parentId === page.id) child.parentId = page.parentId;
    }
  }

  function deletePageRequest(url: URL, rawId: string): Answer {
    const id = parseId(rawId, "page");
    const purge = url.searchParams.get("purge") === "true";
    if (url.searchParams.get("draft") === "true") notModelled("?draft=true: the fake has no drafts");
    const page = readablePage(id, purge ? ["current", "archived", "trashed"] : ["current", "archived"]);
    if (purge) {
      // ASSUMPTION: purging a page that is not in the trash is refused, as "must be called on a trashed page"
      // suggests.
      if (page.status !== "trashed") {
        fail(400, "INVALID_REQUEST_PARAMETER", "Only a trashed page can be purged; delete it first");
      }
      pages.delete(id);
    } else {
      trash(page);
    }
    return { status: 204 };
  }

  function route(method: string, url: URL, text: string, contentType: string | undefined): Answer {
    const allow = (allowed: string) => {
      if (!allowed.split(",").includes(method)) {
        throw new HttpFailure({
          ...vendorError(405, "METHOD_NOT_ALLOWED", "Method Not Allowed"),
          headers: { allow: allowed },
        });
      }
    };
    // The one v1 route modelled: v2 can read a page's labels but not add them.
    const v1Label = /^\/wiki\/rest\/api\/content\/([^/]+)\/label$/.exec(url.pathname);
    if (v1Label) {
      allow("GET,POST");
      return method === "POST"
        ? addLabelsRequest(v1Label[1] as string, text, contentType)
        : v1LabelsAnswer(readablePage(parseId(v1Label[1] as string, "content"), ["current", "archived"]).id);
    }
    const prefix = "/wiki/api/v2";
    if (!url.pathname.startsWith(`${prefix}/`)) fail(404, "NOT_FOUND", "Not Found", url.pathname);
    const segments = url.pathname.slice(prefix.length + 1).split("/");
    const [collection, id, sub, ...rest] = segments;
    if (rest.length === 0 && collection === "pages" && id !== undefined && sub === "labels") {
      allow("GET");
      const page = readablePage(parseId(id, "page"), ["current", "archived", "trashed"]);
      return {
        status: 200,
        body: {
          results: (pageLabels.get(page.id) ?? []).map((name) => labelJson(name)),
          _links: {},
        },
      };
    }
    if (rest.length === 0 && collection === "spaces") {
      if (id === undefined) {
        allow("GET");
        return getSpaces(url);
      }
      if (sub === undefined) {
        allow("GET");
        return getSpace(url, id);
      }
      if (sub === "pages") {
        allow("GET");
        return getSpacePages(url, id);
      }
    }
    if (rest.length === 0 && sub === undefined && collection === "pages") {
      if (id === undefined) {
        allow("POST");
        return createPageRequest(url, text, contentType);
      }
      allow("GET,PUT,DELETE");
      if (method === "GET") return getPage(url, id);
      if (method === "PUT") return updatePageRequest(id, text, contentType);
      return deletePageRequest(url, id);
    }
    return fail(404, "NOT_FOUND", "Not Found", url.pathname);
  }

  /** Basic authentication against the one configured account (Document 3 "Authentication"). */
  function authFailure(header: string | undefined): Answer | undefined {
    const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(header ?? "");
    if (!match?.[1]) {
      // ASSUMPTION: without usable Basic credentials (none, or a Bearer token, which user API tokens are not)
      // the answer is the v2 error envelope.
      return vendorError(
        401,
        "UNAUTHORIZED",
        "Unauthorized",
        "Basic authentication with an API token is required",
      );
    }
    const decoded = Buffer.from(match[1], "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    const givenEmail = colon < 0 ? decoded : decoded.slice(0, colon);
    const givenToken = colon < 0 ? "" : decoded.slice(colon + 1);
    if (givenEmail === email && givenToken === token) return undefined;
    // A valid token presented with another account's email is the mismatch Document 3 names; an unknown
    // token is just rejected.
    const headers: Record<string, string> =
      givenToken === token ? { "x-failure-category": "FAILURE_CLIENT_AUTH_MISMATCH" } : {};
    return { status: 401, headers, body: BASIC_REJECTED };
  }

  /** The rate limit: the test's switch first, then a fixed-window quota. Returns the 429 or the headers. */
  function rateLimit(): { refusal?: Answer; headers: Record<string, string> } {
    const now = clock();
    if (forced429 > 0) {
      forced429--;
      return {
        refusal: {
          ...vendorError(429, "TOO_MANY_REQUESTS", "Rate limit exceeded"),
          headers: {
            "retry-after": String(forcedRetryAfter),
            "x-ratelimit-limit": String(quota),
            "x-ratelimit-remaining": "0",
            "x-ratelimit-reset": resetStamp(now + forcedRetryAfter * 1000),
          },
        },
        headers: {},
      };
    }
    if (now >= windowStart + windowMs) {
      windowStart = now;
      windowCount = 0;
    }
    windowCount++;
    const remaining = Math.max(0, quota - windowCount);
    const headers: Record<string, string> = {
      "x-ratelimit-limit": String(quota),
      "x-ratelimit-remaining": String(remaining),
    };
    if (remaining === 0) headers["x-ratelimit-reset"] = resetStamp(windowStart + windowMs);
    if (windowCount <= quota) return { headers };
    const retryAfter = Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000));
    return {
      refusal: {
        ...vendorError(429, "TOO_MANY_REQUESTS", "Rate limit exceeded"),
        headers: { ...headers, "retry-after": String(retryAfter) },
      },
      headers,
    };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const text = raw?.toString("utf8") ?? "";
    const entry: Logged = {
      method: req.method ?? "",
      path: req.url ?? "",
      headers: flatHeaders(req),
      body: text,
      status: 0,
      answer: "",
      receivedAt: Date.now(),
    };
    requests.push(entry);
    const answer = ((): Answer => {
      const limited = rateLimit();
      if (limited.refusal) return limited.refusal;
      const withLimits = (a: Answer): Answer => ({ ...a, headers: { ...limited.headers, ...a.headers } });
      const denied = authFailure(req.headers.authorization);
      if (denied) return withLimits(denied);
      if (raw === undefined) {
        return withLimits(vendorError(413, "REQUEST_ENTITY_TOO_LARGE", "Request Entity Too Large"));
      }
      try {
        const url = new URL(entry.path, origin);
        const hostile = hostileFor(entry.method, url);
        if (hostile) return withLimits(hostileAnswer(hostile, url, text, req.headers["content-type"]));
        return withLimits(route(entry.method, url, text, req.headers["content-type"]));
      } catch (error) {
        if (error instanceof HttpFailure) return withLimits(error.answer);
        throw error;
      }
    })();
    entry.status = answer.status;
    entry.answer =
      answer.body === undefined
        ? ""
        : typeof answer.body === "string"
          ? answer.body
          : JSON.stringify(answer.body);
    const headers = { "atl-traceid": `fake${requests.length.toString(16)}`, ...answer.headers };
    if (answer.stream)
      streams.push(streamJson(res, { ...answer, headers }, answer.stream.bytes, answer.stream.announce));
    else send(res, { ...answer, headers });
    contract.observe({ ...entry, requestHeaders: entry.headers, answerHeaders: headers }, answer.deliberate);
  }

  /** The hostile listing that applies to this request, if any. */
  function hostileFor(method: string, url: URL): HostileListing | undefined {
    if (!hostileListing || method !== "GET") return undefined;
    const on = hostileListing.on ?? "pages";
    const path = url.pathname;
    if (on === "pages")
      return /^\/wiki\/api\/v2\/spaces\/[^/]+\/pages$/.test(path) ? hostileListing : undefined;
    const lookup = url.searchParams.has("keys") || url.searchParams.has("ids");
    return path === "/wiki/api/v2/spaces" && !lookup ? hostileListing : undefined;
  }

  /** The honest first result page, with its `_links.next` (and `Link`) replaced; or the oversized stream. */
  function hostileAnswer(
    hostile: HostileListing,
    url: URL,
    text: string,
    contentType: string | undefined,
  ): Answer {
    if (hostile.kind === "oversized") {
      return {
        status: 200,
        stream: { bytes: hostile.bytes, announce: hostile.announce ?? false },
        deliberate: "a hostile oversized listing (setHostileListing)",
      };
    }
    const cursor = url.searchParams.get("cursor");
    const first = new URL(url);
    first.searchParams.delete("cursor");
    const honest = route("GET", first, text, contentType);
    const body = honest.body as { results: unknown[]; _links: Record<string, string> };
    const step = hostile.kind === "endless" ? Number(/^endless-(\d+)$/.exec(cursor ?? "")?.[1] ?? 0) + 1 : 0;
    first.searchParams.append(
      "cursor",
      hostile.kind === "endless" ? `endless-${step}` : "same-cursor-every-time",
    );
    const next = `${first.pathname}${first.search}`;
    const results = hostile.kind === "endless" && cursor !== null ? [] : body.results;
    return {
      ...honest,
      headers: { ...honest.headers, link: `<${next}>; rel="next", <${linksBase}>; rel="base"` },
      body: { ...body, results, _links: { ...body._links, next } },
    };
  }

  const copyPage = (page: Page): FakeWikiPage => ({
    ...page,
    parentType: page.parentId === null ? null : "page",
    lastOwnerId: null,
    version: { ...page.version },
  });

  function pageOrThrow(id: string): Page {
    const page = pages.get(id);
    if (!page) throw new Error(`the fake wiki has no page ${id}`);
    return page;
  }

  let closing: Promise<void> | undefined;
  return {
    url: origin,
    origin,
    apiBase: `${origin}/wiki/api/v2`,
    linksBase,
    credentials: { email, token },
    authorization: basicAuthorization(email, token),
    requests,
    contract,
    get baseHits() {
      return baseRequests.length;
    },
    baseRequests,
    setRateLimit(count, retryAfterSeconds) {
      forced429 = count;
      forcedRetryAfter = retryAfterSeconds;
    },
    setHostileListing(listing) {
      hostileListing = listing;
    },
    streamed() {
      return Promise.all(streams);
    },
    seedPages(spaceKey, count) {
      const space = findSpace(spaceKey);
      const ids: string[] = [];
      let groupParent: string | null = space.homepageId;
      for (let i = 0; i < count; i++) {
        const seq = seeded++;
        const n = String(seq + 1).padStart(4, "0");
        const titleOf = TRICKY_TITLES[seq % TRICKY_TITLES.length] as (n: string) => string;
        const bodyOf = TRICKY_BODIES[seq % TRICKY_BODIES.length] as (n: number) => string;
        // Every tenth page is a root; the nine after it are its children.
        const parentId = i % 10 === 0 ? space.homepageId : groupParent;
        const createdMs = SEED_EPOCH + seq * 61_001;
        const versionNumber = 1 + (seq % 3);
        const page = insertPage(space, {
          title: titleOf(n),
          body: bodyOf(seq + 1),
          parentId,
          createdAt: rfc3339(createdMs),
          version: versionNumber,
        });
        page.version = { ...page.version, createdAt: rfc3339(createdMs + (versionNumber - 1) * 3_600_000) };
        if (i % 10 === 0) groupParent = page.id;
        ids.push(page.id);
      }
      return ids;
    },
    createPage(spaceKey, input) {
      const space = findSpace(spaceKey);
      if (titleTaken(space.id, input.title)) throw new Error(`title ${input.title} is taken in ${space.key}`);
      return copyPage(
        insertPage(space, {
          title: input.title,
          body: input.body,
          parentId: input.parentId === undefined ? space.homepageId : input.parentId,
          createdAt: stamp(),
        }),
      );
    },
    editPage(id, changes = {}) {
      const page = pageOrThrow(id);
      if (changes.title !== undefined) page.title = changes.title;
      page.body = changes.body ?? `${page.body}<p>Edited on the server.</p>`;
      if (changes.parentId !== undefined) page.parentId = changes.parentId;
      page.version = {
        number: page.version.number + 1,
        createdAt: stamp(),
        message: changes.message ?? "edited in the browser",
        minorEdit: false,
        authorId: ACCOUNT_ID,
      };
      return copyPage(page);
    },
    trashPage(id) {
      trash(pageOrThrow(id));
    },
    archivePage(id) {
      pageOrThrow(id).status = "archived";
    },
    labelPage(id, name) {
      addLabel(pageOrThrow(id).id, name);
    },
    labels(id) {
      return [...(pageLabels.get(id) ?? [])];
    },
    page(id) {
      const page = pages.get(id);
      return page ? copyPage(page) : undefined;
    },
    pages(spaceKey, { includeTrashed = false } = {}) {
      const space = findSpace(spaceKey);
      return [...pages.values()]
        .filter((page) => page.spaceId === space.id && (includeTrashed || page.status !== "trashed"))
        .sort((a, b) => Number(a.id) - Number(b.id))
        .map(copyPage);
    },
    space(keyOrAlias) {
      return { ...findSpace(keyOrAlias) };
    },
    close() {
      closing ??= Promise.all([closeServer(server), hostile ? closeServer(hostile) : undefined]).then(() =>
        contract.assertNone(),
      );
      return closing;
    },
  };
}

/** `startFakeWiki` for one ava test; the test's teardown closes it. */
export async function givenFakeWiki(t: ExecutionContext, options: FakeWikiOptions = {}): Promise<FakeWiki> {
  const wiki = await startFakeWiki(options);
  t.teardown(() => wiki.close());
  return wiki;
}

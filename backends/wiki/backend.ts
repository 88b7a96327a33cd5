/**
 * The wiki backend (Document 3): a space of a hosted wiki's REST v2 API as `pages/<id>.md` records.
 *
 * - Basic auth from `VENDOR_EMAIL` and `VENDOR_API_KEY`; the header never appears in an error or a log.
 * - Pagination follows `_links.next` joined to the tenant base URL, never `_links.base` (pagination.ts).
 * - Bodies are `body.storage.value`, byte for byte.
 * - Deletions: a delta listing (newest first) cannot show one; `listRemoved` asks, in one request, for the
 *   space's pages in the trash, deleted or archived, and the cache removes those it holds (why this and not a
 *   count: at `listRemoved`).
 * - Writes: PUT with `version.number = base + 1` (the server refuses a stale one with 409), POST, DELETE
 *   (to the trash). An update and a delete are checked against a fresh GET first (a PUT would restore a
 *   trashed page without its new content); the window between the two is the small race DESIGN.md §4
 *   accepts.
 * - Footer comments: `commentSource` (comment-source.ts, over the client comments.ts) unless turned off.
 */
import { isObject, RFC3339 } from "../../core/checks.js";
import { excerpt, SvcError, UserFacingError } from "../../core/errors.js";
import { HttpClient } from "../../core/http.js";
import type {
  BackendRecord,
  BaseToken,
  DeleteOutcome,
  Listing,
  RecordChanges,
  RemovedRecords,
  WritableBackend,
  WriteOutcome,
} from "../backend.js";
import type { RecordContent } from "../record.js";
import { basicJsonHeaders, RestClient, type RestResponse, UnexpectedShapeError } from "../rest.js";
import { WikiCommentSource } from "./comment-source.js";
import { WikiComments } from "./comments.js";
import type { WikiConfig } from "./config.js";
import { digits } from "./content-id.js";
import { PAGE_LIMIT, paginate, type WikiSite } from "./pagination.js";
import { REMOVED_QUERY, removedPages } from "./removed.js";
import { WIKI_SCHEMA } from "./schema.js";
import type { CreatePageBody, UpdatePageBody, WirePage } from "./wire.js";

export interface WikiSpace {
  readonly id: string;
  readonly key: string;
  readonly name: string;
  /** The space's address in a browser. */
  readonly url: string;
}

/** Validates one page of the v2 API; returns the reason it is malformed, or the record. */
export function wikiPageToRecord(value: unknown): BackendRecord | string {
  if (!isObject(value)) return "a page must be an object";
  const id = digits(value.id);
  if (!id) return `bad page id ${excerpt(String(value.id), 30)}`;
  if (typeof value.title !== "string") return `page ${id}: title is not a string`;
  const spaceId = digits(value.spaceId);
  if (!spaceId) return `page ${id}: spaceId is not an id`;
  const parentId = value.parentId === null || value.parentId === undefined ? null : digits(value.parentId);
  if (parentId === undefined) return `page ${id}: parentId is not an id`;
  if (typeof value.createdAt !== "string" || !RFC3339.test(value.createdAt))
    return `page ${id}: createdAt is not a timestamp`;
  const version = isObject(value.version) ? value.version : undefined;
  if (!version || typeof version.number !== "number" || !Number.isSafeInteger(version.number)) {
    return `page ${id}: version.number is missing`;
  }
  const updatedAt =
    typeof version.createdAt === "string" && RFC3339.test(version.createdAt)
      ? version.createdAt
      : value.createdAt;
  const storage = isObject(value.body) && isObject(value.body.storage) ? value.body.storage : undefined;
  const body = storage?.value;
  if (typeof body !== "string")
    return `page ${id}: body.storage.value is missing (was body-format=storage sent?)`;
  const fields = {
    id,
    title: value.title,
    version: version.number,
    spaceId,
    parentId,
    createdAt: value.createdAt,
    updatedAt,
    labels: [] as string[],
  };
  return {
    key: id,
    path: WIKI_SCHEMA.fileName(id),
    version: version.number,
    updatedAt,
    content: { fields, body },
    raw: { ...fields },
    // An account id (svc log shows it); anything else the server put there is not shown.
    ...(typeof version.authorId === "string" && /^[A-Za-z0-9:_-]{1,128}$/.test(version.authorId)
      ? { changedBy: version.authorId }
      : {}),
  };
}

export class WikiBackend implements WritableBackend {
  readonly kind = "wiki";
  readonly schema = WIKI_SCHEMA;
  /** Page timestamps are the server's; a minute covers clock and ordering slack of the sorted listing. */
  readonly overlapMs = 60_000;
  /** The vendor's page size limit is about 5 MB of storage format. */
  readonly maxRecordBytes = 5 * 1024 * 1024;
  readonly description: string;
  private readonly rest: RestClient;
  private readonly site: WikiSite;
  private spaceId: string | undefined;
  readonly commentSource: WikiCommentSource | undefined;

  /** `options.comments`: false leaves the footer comments out (`svc.comments false`). */
  constructor(
    private readonly config: WikiConfig,
    readonly project: string,
    http: HttpClient,
    options: { readonly comments?: boolean } = {},
  ) {
    this.description = `wiki space ${project} at ${config.baseUrl}`;
    this.rest = new RestClient({
      http,
      description: this.description,
      headers: basicJsonHeaders(config.email, config.apiToken),
      errorText: wikiErrorText,
      unauthorized: (response) =>
        new UserFacingError(
          "SVC_BACKEND",
          response.headers["x-failure-category"] === "FAILURE_CLIENT_AUTH_MISMATCH"
            ? `the wiki at ${config.baseUrl} refused the credentials: VENDOR_EMAIL (${config.email}) is not the account VENDOR_API_KEY was issued to; set the email of that account, or make a token for this one`
            : `the wiki at ${config.baseUrl} refused the credentials (401); check VENDOR_EMAIL and VENDOR_API_KEY (a user API token; Bearer tokens are not accepted)`,
          { data: { status: 401 } },
        ),
    });
    this.site = {
      baseUrl: config.baseUrl,
      description: this.description,
      rest: this.rest,
      call: (method, path, body) => this.call(method, path, body),
    };
    this.commentSource =
      options.comments === false ? undefined : new WikiCommentSource(new WikiComments(this.site));
  }

  static create(
    config: WikiConfig,
    project: string,
    agent: string,
    options: { readonly comments?: boolean } = {},
  ): WikiBackend {
    return new WikiBackend(
      config,
      project,
      new HttpClient({ agent, allowedOrigins: config.allowedOrigins }),
      options,
    );
  }

  /** Looks the space up (`GET /wiki/api/v2/spaces?keys=<KEY>`): the credentials work and the space is readable. */
  async probe(): Promise<void> {
    await this.resolveSpace();
  }

  /** One request to `path` on the tenant; a 401 or 403 throws (no request of the push gets past them). */
  private async call(method: string, path: string, body?: unknown): Promise<RestResponse> {
    const response = await this.rest.call(method, `${this.config.baseUrl}${path}`, body);
    if (response.status === 403) {
      throw new UserFacingError(
        "SVC_BACKEND",
        `the wiki account ${this.config.email} has no permission for ${method} ${path.split("?")[0]} (403); ask an admin of space ${this.project} for access, or use another space`,
        { data: { status: 403 } },
      );
    }
    return response;
  }

  private json(response: RestResponse, what: string): unknown {
    return this.rest.parse(what, response);
  }

  private failure(what: string, response: RestResponse): SvcError {
    return this.rest.failure(what, response);
  }

  /** The wiki's paginated walk (pagination.ts) on this tenant. */
  private paginate(first: string, what: string): AsyncGenerator<unknown> {
    return paginate(this.site, first, what);
  }

  /** The footer comments of this space's pages (comments.ts), on the same tenant and credentials. */
  comments(): WikiComments {
    return new WikiComments(this.site);
  }

  private toSpace(value: unknown): WikiSpace | undefined {
    if (!isObject(value)) return undefined;
    const id = digits(value.id);
    if (!id || typeof value.key !== "string") return undefined;
    const webui =
      isObject(value._links) && typeof value._links.webui === "string"
        ? value._links.webui
        : `/spaces/${value.key}`;
    return {
      id,
      key: value.key,
      name: typeof value.name === "string" ? value.name : value.key,
      url: `${this.config.baseUrl}/wiki${webui.startsWith("/") ? webui : `/${webui}`}`,
    };
  }

  /** Every space the account can read. */
  async spaces(): Promise<WikiSpace[]> {
    const spaces: WikiSpace[] = [];
    for await (const item of this.paginate(`/wiki/api/v2/spaces?limit=${PAGE_LIMIT}`, "listing spaces")) {
      const space = this.toSpace(item);
      if (space) spaces.push(space);
    }
    return spaces;
  }

  /** The numeric id of the space the project names (its key, or an active alias of it). */
  async resolveSpace(): Promise<string> {
    if (this.spaceId) return this.spaceId;
    const wanted = this.project;
    const response = await this.call("GET", `/wiki/api/v2/spaces?keys=${encodeURIComponent(wanted)}`);
    if (response.status !== 200) throw this.failure(`looking up space ${wanted}`, response);
    const value = this.json(response, `looking up space ${wanted}`);
    const found =
      isObject(value) && Array.isArray(value.results) ? value.results.map((item) => this.toSpace(item)) : [];
    let match = found.find((space) => space !== undefined);
    if (!match) {
      // An alias: walk the readable spaces for one whose key or alias is the name given.
      for await (const item of this.paginate(`/wiki/api/v2/spaces?limit=${PAGE_LIMIT}`, "listing spaces")) {
        if (
          isObject(item) &&
          (item.currentActiveAlias === wanted || item.alias === wanted || item.key === wanted)
        ) {
          match = this.toSpace(item);
          if (match) break;
        }
      }
    }
    if (!match) {
      throw new UserFacingError(
        "SVC_BACKEND",
        `no wiki space with key or alias ${JSON.stringify(wanted)} is readable with these credentials; \`svc spaces --backend wiki\` lists the ones that are`,
      );
    }
    this.spaceId = match.id;
    return match.id;
  }

  private async pages(query: string, stopBefore?: string): Promise<BackendRecord[]> {
    const spaceId = await this.resolveSpace();
    const records: BackendRecord[] = [];
    const what = `listing the pages of space ${this.project}`;
    for await (const item of this.paginate(`/wiki/api/v2/spaces/${spaceId}/pages?${query}`, what)) {
      const record = wikiPageToRecord(item);
      if (typeof record === "string") {
        throw new SvcError(
          "SVC_BACKEND",
          `${this.description}: the server sent a malformed page (${record}); nothing was written`,
        );
      }
      if (stopBefore !== undefined && record.updatedAt < stopBefore) break;
      records.push(record);
    }
    return records;
  }

  async listAll(): Promise<Listing> {
    return {
      records: await this.pages(`body-format=storage&status=current&limit=${PAGE_LIMIT}`),
      complete: true,
    };
  }

  /** Newest first (`sort=-modified-date`), stopping at the first page older than `since`. */
  async listChangedSince(since: string): Promise<Listing> {
    const records = await this.pages(
      `body-format=storage&status=current&sort=-modified-date&limit=${PAGE_LIMIT}`,
      since,
    );
    return { records, complete: false };
  }

  /**
   * The space's pages that are no longer current (so no longer records): one request,
   * `GET /wiki/api/v2/spaces/{id}/pages?status=trashed&status=deleted&status=archived&sort=-modified-date&limit=250`
   * (getPagesInSpace), without bodies.
   *
   * Why this and not a count: REST v2 gives no count of a space's pages (its listings carry `results` and
   * `_links` only, no total), but its page listing filters by `status` (`current`, `archived`, `deleted`,
   * `trashed`; svc's records are the `current` ones) and holds up to 250 pages a result page. Each page in the
   * answer says by its own `status` that it was removed, so the cache removes the ones it holds at once, with
   * no full listing to confirm it. When the answer has no `_links.next`, it named every removed page the space
   * keeps (`complete`). With more, the description does not say whether moving a page to the trash changes
   * its modified date, so the newest removal need not be among the first 250 (`sort=-modified-date` still
   * puts recent edits first): the check is partial, and the helper says when a full listing last looked. A
   * page purged from the trash, or moved to another space, leaves no trace here: the next full listing finds
   * it gone.
   */
  async listRemoved(): Promise<RemovedRecords> {
    const spaceId = await this.resolveSpace();
    const what = `listing the removed pages of space ${this.project}`;
    const response = await this.call("GET", `/wiki/api/v2/spaces/${spaceId}/pages?${REMOVED_QUERY}`);
    if (response.status !== 200) throw this.failure(what, response);
    const removed = removedPages(this.json(response, what));
    if (typeof removed === "string")
      throw new SvcError("SVC_BACKEND", `${this.description}: ${what} answered with ${removed}`);
    return { keys: removed.ids, complete: !removed.more };
  }

  /** The first `limit` pages and whether there are more (for `svc list`). */
  async listSome(limit: number): Promise<{ records: BackendRecord[]; more: boolean }> {
    const spaceId = await this.resolveSpace();
    const records: BackendRecord[] = [];
    const what = `listing the pages of space ${this.project}`;
    for await (const item of this.paginate(
      `/wiki/api/v2/spaces/${spaceId}/pages?body-format=storage&status=current&limit=${PAGE_LIMIT}`,
      what,
    )) {
      if (records.length === limit) return { records, more: true };
      const record = wikiPageToRecord(item);
      if (typeof record === "string")
        throw new SvcError(
          "SVC_BACKEND",
          `${this.description}: the server sent a malformed page (${record})`,
        );
      records.push(record);
    }
    return { records, more: false };
  }

  /**
   * The names of page `id`'s labels (`GET /pages/{id}/labels`, read-only; v2 can read labels but not add
   * them). The mirror (cli/mirror/wiki-fixtures.ts) checks the durable test fixtures with it.
   */
  async pageLabels(id: string): Promise<string[]> {
    const names: string[] = [];
    const what = `reading the labels of page ${id}`;
    for await (const item of this.paginate(
      `/wiki/api/v2/pages/${encodeURIComponent(id)}/labels?limit=${PAGE_LIMIT}`,
      what,
    )) {
      if (isObject(item) && typeof item.name === "string") names.push(item.name);
    }
    return names;
  }

  private parsePage(what: string, response: RestResponse): BackendRecord {
    const record = wikiPageToRecord(this.json(response, what));
    if (typeof record === "string")
      throw new UnexpectedShapeError(
        `${this.description}: ${what} answered ${response.status} with a malformed page (${record})`,
        response.status,
      );
    return record;
  }

  async create(changes: RecordChanges): Promise<BackendRecord> {
    const spaceId = await this.resolveSpace();
    const title = changes.fields.title;
    const request: CreatePageBody = {
      spaceId,
      status: "current",
      title: typeof title === "string" ? title : "",
      body: { representation: "storage", value: changes.body ?? "" },
    };
    const response = await this.call("POST", "/wiki/api/v2/pages", request);
    if (response.status !== 200 && response.status !== 201) throw this.failure("creating a page", response);
    // The create answer may omit the body; read the page back in the form the listing gives.
    const created = this.parsePageLoose(response);
    return (await this.get(created)) ?? this.parsePage("creating a page", response);
  }

  private parsePageLoose(response: RestResponse): string {
    const value = this.json(response, "creating a page");
    const id = isObject(value) ? digits(value.id) : undefined;
    if (!id)
      throw new UnexpectedShapeError(
        `${this.description}: creating a page answered ${response.status} without a page id`,
        response.status,
      );
    return id;
  }

  async get(key: string): Promise<BackendRecord | undefined> {
    const response = await this.call(
      "GET",
      `/wiki/api/v2/pages/${encodeURIComponent(key)}?body-format=storage`,
    );
    if (response.status === 404) return undefined;
    if (response.status !== 200) throw this.failure(`reading page ${key}`, response);
    const record = this.parsePage(`reading page ${key}`, response);
    // Optional in the description: a page without one is taken as current.
    const status = (this.json(response, `reading page ${key}`) as WirePage).status;
    return status === undefined || status === "current" ? record : undefined;
  }

  async update(
    key: string,
    changes: RecordChanges,
    base: BaseToken,
    desired: RecordContent,
  ): Promise<WriteOutcome> {
    // A PUT on a trashed page restores it and drops the new content (the vendor's rule), so a page trashed
    // since the base is found with a GET first; the window between the two is the race `remove` accepts.
    if (!(await this.get(key))) return { kind: "gone" };
    const title = changes.fields.title ?? desired.fields.title;
    const request: UpdatePageBody = {
      id: key,
      status: "current",
      title: typeof title === "string" ? title : "",
      body: { representation: "storage", value: changes.body ?? desired.body },
      version: { number: (base.version ?? 0) + 1, message: "svc push" },
    };
    const response = await this.call("PUT", `/wiki/api/v2/pages/${encodeURIComponent(key)}`, request);
    if (response.status === 200) return { kind: "ok", record: await this.reread(key, response) };
    if (response.status === 409) return { kind: "conflict", current: "a newer version" };
    if (response.status === 404) return { kind: "gone" };
    throw this.failure(`updating page ${key}`, response);
  }

  /** The page after a write, with its body (an update's answer may carry it, or not). */
  private async reread(key: string, response: RestResponse): Promise<BackendRecord> {
    const record = wikiPageToRecord(this.json(response, `updating page ${key}`));
    if (typeof record !== "string") return record;
    const fresh = await this.get(key);
    if (!fresh)
      throw new SvcError(
        "SVC_BACKEND",
        `${this.description}: page ${key} vanished right after it was written`,
      );
    return fresh;
  }

  async remove(key: string, base: BaseToken): Promise<DeleteOutcome> {
    const current = await this.get(key);
    if (!current) return { kind: "gone" };
    if (current.version !== base.version) return { kind: "conflict", current: `version ${current.version}` };
    const response = await this.call("DELETE", `/wiki/api/v2/pages/${encodeURIComponent(key)}`);
    // The vendor answers 204 (no body); a 200 with a page from something in between says nothing, and the
    // next push finds out (the GET before the DELETE then finds the page trashed, or still there).
    if (response.status === 204) return { kind: "ok" };
    if (response.status === 404) return { kind: "gone" };
    throw this.failure(`deleting page ${key}`, response);
  }
}

/**
 * The wiki's own words in an error body: the v2 API's `errors[]` (`title`, `detail`), or v1's `message`;
 * undefined when it has none.
 */
function wikiErrorText(body: Buffer): string | undefined {
  try {
    const value: unknown = JSON.parse(body.toString("utf8"));
    if (!isObject(value)) return undefined;
    const parts = (Array.isArray(value.errors) ? value.errors : []).flatMap((error) =>
      isObject(error)
        ? [[error.title, error.detail].filter((part) => typeof part === "string" && part !== "").join(": ")]
        : [],
    );
    const text = parts.filter((part) => part !== "").join("; ");
    if (text !== "") return excerpt(text, 300);
    return typeof value.message === "string" ? excerpt(value.message, 300) : undefined;
  } catch {
    return undefined;
  }
}

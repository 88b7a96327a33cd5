/**
 * The simulator backend (Document 1): lists issues, full or `since` a timestamp. Everything the server sends
 * is untrusted (Document 1 "What the service does" 9): each issue is checked field by field before it
 * becomes a record, and a malformed answer fails the sync with a message instead of writing garbage files.
 */
import { isObject, RFC3339 } from "../../core/checks.js";
import { excerpt, SvcError } from "../../core/errors.js";
import { type HttpClient, type HttpResponse, NotJsonError } from "../../core/http.js";
import type {
  BackendRecord,
  BaseToken,
  DeleteOutcome,
  Listing,
  RecordChanges,
  WritableBackend,
  WriteOutcome,
} from "../backend.js";
import type { RecordContent } from "../record.js";
import { UnexpectedShapeError } from "../rest.js";
import { SimComments } from "./comments.js";
import { streamSimItems } from "./listing.js";
import { SIM_SCHEMA, SIM_STATUSES, simFileName } from "./schema.js";

/**
 * The slugs of the projects the simulator at `origin` serves, in its order (`GET /projects`, Document 1: an
 * array of `{slug, …}`): what `svc doctor` offers to clone where it knows no project.
 */
export async function simProjectSlugs(origin: string, http: HttpClient): Promise<string[]> {
  const url = `${origin}/projects`;
  const response = await http.request({ method: "GET", url });
  const what = `GET ${url}`;
  if (response.status !== 200) {
    throw new SvcError(
      "SVC_BACKEND",
      `${what} answered ${response.status}: ${excerpt(response.body.toString("utf8"), 200)}`,
      { data: { status: response.status } },
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(response.body.toString("utf8"));
  } catch {
    throw new NotJsonError(what, response.status, response.body);
  }
  if (
    !Array.isArray(value) ||
    !value.every((project) => isObject(project) && typeof project.slug === "string")
  ) {
    throw new UnexpectedShapeError(
      `${what} answered ${response.status} with something other than an array of {slug, …}`,
      response.status,
    );
  }
  return value.map((project) => (project as { slug: string }).slug);
}

/** Validates one issue from the server; returns the reason it is malformed, or the record. */
export function simIssueToRecord(value: unknown): BackendRecord | string {
  if (!isObject(value) || !isObject(value.frontmatter) || typeof value.body !== "string") {
    return "an issue must be {frontmatter: {...}, body: string}";
  }
  const f = value.frontmatter;
  if (typeof f.id !== "number" || !Number.isSafeInteger(f.id) || f.id < 1)
    return `bad id ${excerpt(String(f.id), 30)}`;
  if (typeof f.title !== "string") return `issue ${f.id}: title is not a string`;
  if (typeof f.status !== "string" || !(SIM_STATUSES as readonly string[]).includes(f.status)) {
    return `issue ${f.id}: status ${excerpt(String(f.status), 30)} is not one of ${SIM_STATUSES.join(", ")}`;
  }
  if (!Array.isArray(f.labels) || !f.labels.every((label) => typeof label === "string")) {
    return `issue ${f.id}: labels is not a list of strings`;
  }
  for (const name of ["created_at", "updated_at"] as const) {
    if (typeof f[name] !== "string" || !RFC3339.test(f[name]))
      return `issue ${f.id}: ${name} is not an RFC 3339 timestamp`;
  }
  if (typeof f.version !== "number" || !Number.isSafeInteger(f.version) || f.version < 0) {
    return `issue ${f.id}: version is not a whole number`;
  }
  if (f.assignee !== undefined && f.assignee !== null && typeof f.assignee !== "string") {
    return `issue ${f.id}: assignee is not a string`;
  }
  const fields = {
    id: f.id,
    title: f.title,
    status: f.status,
    labels: f.labels as string[],
    created_at: f.created_at as string,
    updated_at: f.updated_at as string,
    version: f.version,
    ...(typeof f.assignee === "string" ? { assignee: f.assignee } : {}),
  };
  return {
    key: String(f.id),
    path: simFileName(f.id),
    version: f.version,
    updatedAt: fields.updated_at,
    content: { fields, body: value.body },
    raw: { frontmatter: fields, body: value.body },
  };
}

export class SimBackend implements WritableBackend {
  readonly kind = "sim";
  readonly schema = SIM_SCHEMA;
  readonly overlapMs = 1000;
  /** The simulator refuses request bodies over 1 MiB (DESIGN.md §5). */
  readonly maxRecordBytes = 1024 * 1024;
  readonly description: string;
  readonly commentSource: SimComments | undefined;
  private readonly base: string;

  /** `options.comments`: false leaves comments out (`svc.comments false`). */
  constructor(
    private readonly origin: string,
    readonly project: string,
    private readonly http: HttpClient,
    options: { readonly comments?: boolean } = {},
  ) {
    this.base = `${origin}/projects/${encodeURIComponent(project)}`;
    this.description = `sim project ${project} at ${origin}`;
    this.commentSource =
      options.comments === false ? undefined : new SimComments(origin, project, http, this.description);
  }

  /** `GET /projects/<slug>` (Document 1 "Endpoints"): the project exists. The simulator has no credentials. */
  async probe(): Promise<void> {
    const response = await this.http.request({ method: "GET", url: this.base });
    if (response.status !== 200) throw this.refusal("reading the project", this.base, response);
  }

  /** An answer other than 200: a 404 names the project as missing. */
  private refusal(what: string, url: string, response: HttpResponse): SvcError {
    if (response.status === 404) {
      return new SvcError(
        "SVC_BACKEND",
        `${this.description}: no such project (404); check the slug with GET ${new URL(url).origin}/projects`,
        { data: { status: 404 } },
      );
    }
    return new SvcError(
      "SVC_BACKEND",
      `${this.description}: ${what} answered ${response.status}: ${excerpt(response.body.toString("utf8"), 200)}`,
      { data: { status: response.status } },
    );
  }

  listAll(): Promise<Listing> {
    return this.list(`${this.base}/issues`);
  }

  /** The issues in batches; returns what the listing said about itself (its counts, its comments' state). */
  async *streamAll(): AsyncGenerator<readonly BackendRecord[], Omit<Listing, "records">> {
    const said: { liveCount?: number; commentsState?: string } = {};
    yield* this.listed(`${this.base}/issues`, said);
    return { complete: true, ...said };
  }

  listChangedSince(since: string): Promise<Listing> {
    return this.list(`${this.base}/issues?since=${encodeURIComponent(since)}`);
  }

  private async list(url: string): Promise<Listing> {
    const records: BackendRecord[] = [];
    const said: { liveCount?: number; commentsState?: string } = {};
    for await (const batch of this.listed(url, said)) records.push(...batch);
    return { records, complete: true, ...said };
  }

  /**
   * The issues of the listing at `url`, validated, in batches as they arrive; each id once. `said` gets how
   * many issues the project holds, when the server says (`LIVE_COUNT_HEADER`; a server of Document 1 alone
   * does not). The comment listing (backends/sim/comments.ts) is read the same way (`streamSimItems`).
   */
  private listed(
    url: string,
    said: { liveCount?: number; commentsState?: string } = {},
  ): AsyncGenerator<readonly BackendRecord[]> {
    return streamSimItems<BackendRecord>({
      http: this.http,
      origin: this.origin,
      url,
      description: this.description,
      noun: "issue",
      listing: `listing the issues of sim project ${this.project}`,
      convert: simIssueToRecord,
      idOf: (record) => record.content.fields.id as number,
      refusal: (response) => this.refusal("listing issues", url, response),
      said,
    });
  }

  /** The JSON body of a POST or PATCH: the writable fields that are set, and the body. */
  private writeBody(changes: RecordChanges): string {
    const body: Record<string, unknown> = {};
    for (const spec of this.schema.fields) {
      if (spec.serverControlled) continue;
      const value = changes.fields[spec.name];
      if (value !== undefined) body[spec.name] = value;
    }
    if (changes.body !== undefined) body.body = changes.body;
    return JSON.stringify(body);
  }

  private parseIssue(what: string, response: HttpResponse): BackendRecord {
    let value: unknown;
    try {
      value = JSON.parse(response.body.toString("utf8"));
    } catch {
      throw new NotJsonError(`${this.description}: ${what}`, response.status, response.body);
    }
    const record = simIssueToRecord(value);
    // JSON of another shape than Document 1's issue: the server's fault, as the other backends say it.
    if (typeof record === "string")
      throw new UnexpectedShapeError(
        `${this.description}: ${what} answered ${response.status} with a malformed issue (${record})`,
        response.status,
      );
    return record;
  }

  private failure(what: string, status: number, body: Buffer): SvcError {
    return new SvcError(
      "SVC_BACKEND",
      `${this.description}: ${what} answered ${status}: ${excerpt(body.toString("utf8"), 300)}`,
      { data: { status } },
    );
  }

  async create(changes: RecordChanges): Promise<BackendRecord> {
    const response = await this.http.request({
      method: "POST",
      url: `${this.base}/issues`,
      headers: { "content-type": "application/json" },
      body: this.writeBody(changes),
    });
    if (response.status !== 201) throw this.failure("creating an issue", response.status, response.body);
    return this.parseIssue("creating an issue", response);
  }

  async update(
    key: string,
    changes: RecordChanges,
    base: BaseToken,
    _desired?: RecordContent,
  ): Promise<WriteOutcome> {
    const what = `updating issue ${key}`;
    const response = await this.http.request({
      method: "PATCH",
      url: `${this.base}/issues/${encodeURIComponent(key)}`,
      headers: {
        "content-type": "application/json",
        ...(base.version === null ? {} : { "if-match": `"${base.version}"` }),
      },
      body: this.writeBody(changes),
    });
    if (response.status === 200) return { kind: "ok", record: this.parseIssue(what, response) };
    if (response.status === 409) return { kind: "conflict", current: conflictVersion(response.body) };
    if (response.status === 404) return { kind: "gone" };
    throw this.failure(what, response.status, response.body);
  }

  async remove(key: string, base: BaseToken): Promise<DeleteOutcome> {
    const response = await this.http.request({
      method: "DELETE",
      url: `${this.base}/issues/${encodeURIComponent(key)}`,
      headers: base.version === null ? {} : { "if-match": `"${base.version}"` },
    });
    // Only the simulator's own answer (Document 1: 204, no body) says the issue is gone: a 200 with a
    // page from something in between says nothing, and the next push finds out (a 404 then).
    if (response.status === 204) return { kind: "ok" };
    if (response.status === 409) return { kind: "conflict", current: conflictVersion(response.body) };
    if (response.status === 404) return { kind: "gone" };
    throw this.failure(`deleting issue ${key}`, response.status, response.body);
  }
}

/** The `current` member of a 409 `version_mismatch` body, as text for messages. */
function conflictVersion(body: Buffer): string {
  try {
    const value = JSON.parse(body.toString("utf8")) as { current?: unknown };
    return typeof value.current === "number" ? `version ${value.current}` : "a newer version";
  } catch {
    return "a newer version";
  }
}

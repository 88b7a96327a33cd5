/**
 * The fake wiki's HTTP side and its helpers: each request is logged, then refused by the rate limit (before
 * authentication), by Basic authentication or for a body over 5 MB, or answered by a hostile listing or the
 * router; the rate-limit headers go on every answer, and every exchange goes to the vendor-contract watch,
 * whose verdict `close()` delivers. The helpers change the wiki (pages, labels, footer comments) as "someone
 * else" would.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { ExecutionContext } from "ava";
import { readRequestBody } from "../../core/request-body.js";
import { FakeVendorServer, givenFake, requestEntry, thrownAnswer } from "../fake-server.js";
import { closeServer, listenOnLoopback } from "../loopback.js";
import { ContractWatch } from "../vendor-contract.js";
import { authFailure, basicAuthorization } from "./auth.js";
import { copyComment } from "./comments.js";
import { hostileAnswer, hostileFor, startBaseServer, streamJson } from "./hostile.js";
import { type Answer, answerText, send, vendorError } from "./http.js";
import { RateLimit } from "./rate-limit.js";
import { route } from "./router.js";
import { Shapes } from "./shapes.js";
import { copyPage, WikiStore } from "./store.js";
import type {
  FakeWiki,
  FakeWikiAccount,
  FakeWikiComment,
  FakeWikiOptions,
  FakeWikiPage,
  FakeWikiRequest,
  FakeWikiSpace,
  HostileListing,
  PageChanges,
  StreamedAnswer,
} from "./types.js";
import {
  ACCOUNT_DISPLAY_NAME,
  ACCOUNT_ID,
  FIRST_COMMENT_ID,
  MAX_BODY_BYTES,
  OTHER_ACCOUNT_ID,
  OTHER_DISPLAY_NAME,
} from "./vendor-data.js";

interface Account {
  readonly email: string;
  readonly token: string;
}

/** The fake: the HTTP side (rate limit, authentication, hostile listings, router, request log) and the helpers. */
class FakeWikiServer extends FakeVendorServer<FakeWikiRequest> implements FakeWiki {
  readonly apiBase: string;
  readonly authorization: string;
  private readonly streams: Promise<StreamedAnswer>[] = [];
  private hostileListing: HostileListing | undefined;
  private readonly shapes: Shapes;

  constructor(
    servers: readonly Server[],
    origin: string,
    readonly linksBase: string,
    readonly credentials: Account,
    /** Requests received by the hostile `_links.base` server. */
    readonly baseRequests: readonly FakeWikiRequest[],
    private readonly store: WikiStore,
    private readonly limit: RateLimit,
    options: FakeWikiOptions,
  ) {
    super(servers, origin, new ContractWatch("confluence"));
    this.apiBase = `${origin}/wiki/api/v2`;
    this.authorization = basicAuthorization(credentials.email, credentials.token);
    this.hostileListing = options.hostileListing;
    this.shapes = new Shapes(store, linksBase);
  }

  get baseHits(): number {
    return this.baseRequests.length;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const received = await readRequestBody(req, { keepBytes: MAX_BODY_BYTES, drainBytes: Infinity });
    const text = received.tooLarge ? "" : received.bytes.toString("utf8");
    const entry = requestEntry(req, text, { answer: "" });
    this.requests.push(entry);
    const answer = this.answer(entry, received.tooLarge, req.headers["content-type"]);
    entry.status = answer.status;
    entry.answer = answerText(answer);
    const headers = { "atl-traceid": `fake${this.requests.length.toString(16)}`, ...answer.headers };
    if (answer.stream)
      this.streams.push(streamJson(res, { ...answer, headers }, answer.stream.bytes, answer.stream.announce));
    else send(res, { ...answer, headers });
    this.contract.observe(
      { ...entry, requestHeaders: entry.headers, answerHeaders: headers },
      answer.deliberate,
    );
  }

  /** The refusals in their order (rate limit, authentication, size), then a hostile listing or the router. */
  private answer(entry: FakeWikiRequest, tooLarge: boolean, contentType: string | undefined): Answer {
    const limited = this.limit.check();
    if (limited.refusal) return limited.refusal;
    const withLimits = (a: Answer): Answer => ({ ...a, headers: { ...limited.headers, ...a.headers } });
    const denied = authFailure(entry.headers.authorization, this.credentials.email, this.credentials.token);
    if (denied) return withLimits(denied);
    if (tooLarge) return withLimits(vendorError(413, "REQUEST_ENTITY_TOO_LARGE", "Request Entity Too Large"));
    try {
      const url = new URL(entry.path, this.origin);
      const call = {
        method: entry.method,
        url,
        text: entry.body,
        contentType,
        store: this.store,
        shapes: this.shapes,
      };
      const hostile = hostileFor(this.hostileListing, entry.method, url);
      return withLimits(hostile ? hostileAnswer(hostile, call) : route(call));
    } catch (error) {
      return withLimits(thrownAnswer<Answer>(error));
    }
  }

  setRateLimit(count: number, retryAfterSeconds: number): void {
    this.limit.force(count, retryAfterSeconds);
  }

  setHostileListing(listing: HostileListing | undefined): void {
    this.hostileListing = listing;
  }

  streamed(): Promise<StreamedAnswer[]> {
    return Promise.all(this.streams);
  }

  seedPages(spaceKey: string, count: number): string[] {
    return this.store.seedPages(spaceKey, count);
  }

  createPage(
    spaceKey: string,
    input: { title: string; body: string; parentId?: string | null },
  ): FakeWikiPage {
    const space = this.store.findSpace(spaceKey);
    if (this.store.titleTaken(space.id, input.title))
      throw new Error(`title ${input.title} is taken in ${space.key}`);
    return copyPage(
      this.store.insertPage(space, {
        title: input.title,
        body: input.body,
        parentId: input.parentId === undefined ? space.homepageId : input.parentId,
        createdAt: this.store.stamp(),
      }),
    );
  }

  editPage(id: string, changes: PageChanges = {}): FakeWikiPage {
    const page = this.store.pageOrThrow(id);
    if (changes.title !== undefined) page.title = changes.title;
    page.body = changes.body ?? `${page.body}<p>Edited on the server.</p>`;
    if (changes.parentId !== undefined) page.parentId = changes.parentId;
    page.version = this.store.nextVersion(page, changes.message ?? "edited in the browser");
    return copyPage(page);
  }

  trashPage(id: string): void {
    this.store.trash(this.store.pageOrThrow(id));
  }

  archivePage(id: string): void {
    this.store.pageOrThrow(id).status = "archived";
  }

  labelPage(id: string, name: string): void {
    this.store.addLabel(this.store.pageOrThrow(id).id, name);
  }

  labels(id: string): string[] {
    return [...this.store.labelsOf(id)];
  }

  page(id: string): FakeWikiPage | undefined {
    const page = this.store.pages.get(id);
    return page ? copyPage(page) : undefined;
  }

  pages(spaceKey: string, { includeTrashed = false }: { includeTrashed?: boolean } = {}): FakeWikiPage[] {
    const space = this.store.findSpace(spaceKey);
    return [...this.store.pages.values()]
      .filter((page) => page.spaceId === space.id && (includeTrashed || page.status !== "trashed"))
      .sort((a, b) => Number(a.id) - Number(b.id))
      .map(copyPage);
  }

  space(keyOrAlias: string): FakeWikiSpace {
    return { ...this.store.findSpace(keyOrAlias) };
  }

  readonly self: FakeWikiAccount = { accountId: ACCOUNT_ID, displayName: ACCOUNT_DISPLAY_NAME };
  readonly someoneElse: FakeWikiAccount = { accountId: OTHER_ACCOUNT_ID, displayName: OTHER_DISPLAY_NAME };

  addAccount(account: FakeWikiAccount): void {
    this.store.comments.users.set(account.accountId, account.displayName);
  }

  addComment(pageId: string, body: string, { authorId = OTHER_ACCOUNT_ID } = {}): FakeWikiComment {
    const page = this.store.pageOrThrow(pageId);
    return copyComment(this.store.comments.insert(page.id, body, authorId, this.store.stamp()));
  }

  seedComments(pageIds: readonly string[], count: number, options: { authorId?: string } = {}): string[] {
    return pageIds.flatMap((pageId) =>
      Array.from(
        { length: count },
        (_, i) => this.addComment(pageId, `<p>Comment ${i + 1} on page ${pageId}: a &amp; b</p>`, options).id,
      ),
    );
  }

  editComment(id: string, body?: string, options: { authorId?: string } = {}): FakeWikiComment {
    const comment = this.store.comments.orThrow(id);
    const authorId = options.authorId ?? comment.versions[0]?.authorId ?? OTHER_ACCOUNT_ID;
    const next = body ?? `${comment.body}<p>Edited on the server.</p>`;
    this.store.comments.edit(comment, next, authorId, this.store.stamp(), "edited in the browser");
    return copyComment(comment);
  }

  deleteComment(id: string): void {
    this.store.comments.comments.delete(this.store.comments.orThrow(id).id);
  }

  comment(id: string): FakeWikiComment | undefined {
    const comment = this.store.comments.comments.get(id);
    return comment ? copyComment(comment) : undefined;
  }

  comments(pageId: string): FakeWikiComment[] {
    return this.store.comments
      .ofPage(pageId)
      .sort((a, b) => Number(a.id) - Number(b.id))
      .map(copyComment);
  }
}

/** What `_links.base` says: the hostile base server's `/wiki`, this server's own, or the option as given. */
function linksBaseOf(requested: string, hostileOrigin: string, origin: string): string {
  if (requested === "hostile") return `${hostileOrigin}/wiki`;
  return requested === "self" ? `${origin}/wiki` : requested;
}

/** Starts the fake on `127.0.0.1:0` (and, unless `linksBase` says otherwise, the hostile base server). */
export async function startFakeWiki(options: FakeWikiOptions = {}): Promise<FakeWiki> {
  const clock = options.now ?? Date.now;
  const store = new WikiStore(
    clock,
    options.firstPageId ?? 1,
    options.deniedStatus ?? 403,
    options.firstCommentId ?? FIRST_COMMENT_ID,
  );
  for (const spec of options.spaces ?? [{ key: "SVC", name: "svc test space" }]) store.addSpace(spec);
  const limit = new RateLimit(options.rateLimitQuota ?? 10_000, options.rateLimitWindowMs ?? 60_000, clock);
  const requestedBase = options.linksBase ?? "hostile";
  const baseRequests: FakeWikiRequest[] = [];
  const base = requestedBase === "hostile" ? await startBaseServer(baseRequests) : undefined;
  const server = createServer();
  let origin: string;
  try {
    origin = await listenOnLoopback(server);
  } catch (error) {
    if (base) await closeServer(base.server);
    throw error;
  }
  const servers = base ? [server, base.server] : [server];
  const account = {
    email: options.email ?? "svc-fake@example.test",
    token: options.token ?? "fake-api-token-0123456789",
  };
  const linksBase = linksBaseOf(requestedBase, base?.origin ?? "", origin);
  const fake = new FakeWikiServer(servers, origin, linksBase, account, baseRequests, store, limit, options);
  // A handler's bug answers the vendor's 500 envelope, naming the error.
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    fake.handle(req, res).catch((error: unknown) => {
      send(res, vendorError(500, "INTERNAL_SERVER_ERROR", "Internal Server Error", String(error)));
    });
  });
  return fake;
}

/** `startFakeWiki` for one ava test; the test's teardown closes it. */
export function givenFakeWiki(t: ExecutionContext, options: FakeWikiOptions = {}): Promise<FakeWiki> {
  return givenFake(t, () => startFakeWiki(options));
}

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import test, { type ExecutionContext } from "ava";
import { type SvcError, UserFacingError } from "../core/errors.js";
import { HttpClient, isServerFault, NotJsonError, openGateAt } from "../core/http.js";
import type { BackendRecord } from "./backend.js";
import { forgeLimits, QuotaExhaustedError } from "./forge/quota.js";
import { AN_OBJECT, RestClient, readForWrite, UnexpectedShapeError } from "./rest.js";

/** A loopback server answering each request with `answer`; its origin. */
async function givenServer(
  t: ExecutionContext,
  answer: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<string> {
  const server = createServer(answer);
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  t.teardown(() => server.close());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function client(origin: string, options: Partial<ConstructorParameters<typeof RestClient>[0]> = {}) {
  return new RestClient({
    http: new HttpClient({ allowedOrigins: origin, agent: "test" }),
    description: `vendor project P at ${origin}`,
    headers: { authorization: "Bearer secret" },
    errorText: (body) => {
      const text = body.toString("utf8");
      return text.startsWith("{") ? (JSON.parse(text) as { message?: string }).message : undefined;
    },
    unauthorized: () => new UserFacingError("SVC_BACKEND", "refused the token"),
    ...options,
  });
}

test("a 2xx that is not JSON, or JSON of another shape, is a server fault carrying its status", async (t) => {
  const bodies = ["<html>Sign in</html>", "null", "[1]", '{"issues":[]}'];
  let asked = 0;
  const origin = await givenServer(t, (_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(bodies[asked++]);
  });
  const rest = client(origin);
  for (const expected of [
    {
      instanceOf: NotJsonError,
      message:
        /^vendor project P at .*: reading it answered 200 with a body that is not JSON: "<html>Sign in<\/html>"/,
    },
    {
      instanceOf: UnexpectedShapeError,
      message: /: reading it answered 200 with null, not an object; nothing was written$/,
    },
    {
      instanceOf: UnexpectedShapeError,
      message: /: reading it answered 200 with a list, not an object; nothing was written$/,
    },
  ]) {
    const response = await rest.call("GET", `${origin}/thing`);
    const error = t.throws(() => rest.parse("reading it", response, AN_OBJECT), expected);
    t.is((error as SvcError).data.status, 200);
    t.true(isServerFault(error), "the push says to push again");
  }
  const response = await rest.call("GET", `${origin}/thing`);
  t.deepEqual(rest.parse("reading it", response, AN_OBJECT), { issues: [] });
});

test("an unexpected answer names what failed, the request, the status and the vendor's words (else an excerpt)", async (t) => {
  const origin = await givenServer(t, (req, res) => {
    res.writeHead(req.url === "/words?x=1" ? 503 : 502, { "content-type": "application/json" });
    res.end(req.url === "/words?x=1" ? '{"message":"Down for maintenance"}' : "Bad gateway");
  });
  const rest = client(origin);
  const words = rest.failure("listing the issues", await rest.call("GET", `${origin}/words?x=1`));
  t.is(
    words.message,
    `vendor project P at ${origin}: listing the issues (GET /words) answered 503: Down for maintenance`,
  );
  t.is(words.data.status, 503);
  const excerpt = rest.failure("listing the issues", await rest.call("POST", `${origin}/other`, { a: 1 }));
  t.is(
    excerpt.message,
    `vendor project P at ${origin}: listing the issues (POST /other) answered 502: "Bad gateway"`,
  );
  t.false(excerpt.message.includes("secret"));
});

test("a 401 throws the backend's own error; a JSON body is sent as JSON", async (t) => {
  const seen: { type?: string; auth?: string }[] = [];
  const origin = await givenServer(t, (req, res) => {
    seen.push({ type: req.headers["content-type"], auth: req.headers.authorization });
    res.writeHead(401);
    res.end();
  });
  await t.throwsAsync(client(origin).call("PUT", `${origin}/x`, { a: 1 }), { message: "refused the token" });
  t.deepEqual(seen, [{ type: "application/json", auth: "Bearer secret" }]);
});

test("a quota reset further ahead than the longest wait is refused in the vendor's words, at the shared gate", async (t) => {
  let asked = 0;
  const resetS = Math.ceil(Date.now() / 1000) + 3600;
  const origin = await givenServer(t, (_req, res) => {
    asked++;
    res.writeHead(200, { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(resetS) });
    res.end("{}");
  });
  const rest = client(origin, { limits: forgeLimits(origin) });
  await rest.call("GET", `${origin}/first`);
  t.is(openGateAt(origin), resetS * 1000, "the HTTP client's gate holds the reset");
  await t.throwsAsync(rest.call("GET", `${origin}/second`), { instanceOf: QuotaExhaustedError });
  t.is(asked, 1, "the second request is not sent");
});

function record(updatedAt: string): { record: BackendRecord } {
  return {
    record: {
      key: "1",
      path: "issues/1.md",
      version: null,
      updatedAt,
      content: { fields: {}, body: "" },
      raw: {},
    },
  };
}

test("compare-before-write: gone, a newer updatedAt, or the base; a write whose outcome already holds is done", async (t) => {
  const base = { version: null, updatedAt: "2026-01-01T00:00:00Z" };
  t.deepEqual(await readForWrite(async () => undefined, base), { kind: "gone" });
  t.deepEqual(await readForWrite(async () => record("2026-01-02T00:00:00Z"), base), {
    kind: "conflict",
    current: "updated 2026-01-02T00:00:00Z",
  });
  const same = record(base.updatedAt);
  t.deepEqual(await readForWrite(async () => same, base), { kind: "current", value: same });
  const closed = record("2026-01-02T00:00:00Z");
  t.deepEqual(
    await readForWrite(
      async () => closed,
      base,
      () => true,
    ),
    { kind: "current", value: closed },
  );
});

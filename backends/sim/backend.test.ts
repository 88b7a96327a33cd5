/**
 * The simulator's issue listing is one unpaginated JSON array, read as it arrives: it has no cap as a whole
 * (a listing larger than the client's 32 MiB is read), each issue is bounded by the client's cap instead
 * (one longer is refused as soon as it passes it, and the connection is closed), and the issues come out
 * in batches. An answer that is not an array of issues is refused with what it was. An answer that never
 * ends, however fast its issues come, is stopped at `SVC_LISTING_TIMEOUT_MS`.
 */
import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import test, { type ExecutionContext } from "ava";
import { HttpClient, isServerFault, NotJsonError } from "../../core/http.js";
import { ListingTimeoutError } from "../../core/pagination.js";
import { SimBackend } from "./backend.js";

const MIB = 1024 * 1024;

async function givenServer(t: ExecutionContext, handler: RequestListener): Promise<string> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    // A connection svc left open must not hold the teardown.
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function issue(id: number, body: string): unknown {
  const at = "2026-01-01T00:00:00.000Z";
  return {
    frontmatter: {
      id,
      title: `Issue ${id}`,
      status: "open",
      labels: [],
      created_at: at,
      updated_at: at,
      version: 1,
    },
    body,
  };
}

function backend(origin: string): SimBackend {
  return new SimBackend(origin, "demo", new HttpClient({ agent: "sim-test", allowedOrigins: origin }));
}

test("a listing larger than the client's 32 MiB cap is read whole", async (t) => {
  const body = "x".repeat(20 * 1024);
  const listing = Buffer.from(
    JSON.stringify(Array.from({ length: 2000 }, (_, index) => issue(index + 1, body))),
  );
  t.true(listing.length > 32 * MIB);
  const origin = await givenServer(t, (_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(listing);
  });
  const { records } = await backend(origin).listAll();
  t.is(records.length, 2000);
});

test("one issue longer than the client's cap is refused as it passes it, naming the bound and how to raise it", async (t) => {
  let sent = 0;
  let closed = false;
  let connectionClosed: () => void = () => {};
  const closedByClient = new Promise<void>((resolve) => {
    connectionClosed = resolve;
  });
  const origin = await givenServer(t, (_req, res) => {
    res.on("error", () => {});
    res.on("close", () => {
      closed = true;
      connectionClosed();
    });
    res.writeHead(200, { "content-type": "application/json" });
    const start = JSON.stringify(issue(1, "a"));
    res.write(`[${start},{"frontmatter":{},"body":"`);
    const piece = "x".repeat(64 * 1024);
    // An endless second issue, written as fast as the client reads.
    const more = () => {
      while (!closed && sent < 64 * MIB) {
        sent += piece.length;
        if (!res.write(piece)) return void res.once("drain", more);
      }
    };
    more();
  });
  const http = new HttpClient({ agent: "sim-test", allowedOrigins: origin, maxResponseBytes: MIB });
  const error = await t.throwsAsync(new SimBackend(origin, "demo", http).listAll());
  t.is(
    error?.message,
    `sim project demo at ${origin}: issue 2 of the listing is longer than 1 MiB, the most svc accepts in one ` +
      "answer; svc closed the connection and kept none of the listing. If issues this large are expected, run " +
      `the command again with e.g. SVC_HTTP_MAX_RESPONSE_MIB=2; if not, report it to the admins of ${origin}`,
  );
  // The server hears of the close a moment after svc refused: wait for it. Kept open, the server would
  // wait forever on a client that stopped reading, so a bound says so instead of the test's timeout.
  const deadline = new Promise<void>((resolve) => setTimeout(resolve, 5000).unref());
  await Promise.race([closedByClient, deadline]);
  t.true(closed, "svc closed the connection");
  t.true(sent < 16 * MIB, `the server sent ${sent} bytes`);
});

test("the listing comes out in batches of at most 2,000 issues, every issue once, in the server's order", async (t) => {
  const listing = Buffer.from(
    JSON.stringify(Array.from({ length: 4500 }, (_, index) => issue(index + 1, "b"))),
  );
  const origin = await givenServer(t, (_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    // In pieces that cut issues anywhere.
    for (let at = 0; at < listing.length; at += 777) res.write(listing.subarray(at, at + 777));
    res.end();
  });
  const sizes: number[] = [];
  const keys: string[] = [];
  for await (const batch of backend(origin).streamAll()) {
    sizes.push(batch.length);
    keys.push(...batch.map((record) => record.key));
  }
  t.deepEqual(sizes, [2000, 2000, 500]);
  t.deepEqual(
    keys,
    Array.from({ length: 4500 }, (_, index) => String(index + 1)),
  );
});

test("an answer that is not an array of issues is refused with what it was", async (t) => {
  const cases: [string, (origin: string) => string | RegExp][] = [
    [
      "<html><body>Sign in</body></html>",
      (origin) =>
        `sim project demo at ${origin}: listing issues answered 200 with a body that is not JSON: ` +
        '"<html><body>Sign in</body></html>" (a proxy or sign-in page between svc and the server may have answered in its place)',
    ],
    [
      `[${JSON.stringify(issue(1, "a"))},{]`,
      () => /listing issues answered 200 with a body that is not JSON/,
    ],
    [`[${JSON.stringify(issue(1, "a"))}`, () => /listing issues answered 200 with a body that is not JSON/],
    ['{"issues":[]}', (origin) => `sim project demo at ${origin}: the issue list is not a JSON array`],
    [
      `[${JSON.stringify(issue(1, "a"))},${JSON.stringify(issue(1, "b"))}]`,
      (origin) => `sim project demo at ${origin}: the server listed issue 1 twice; nothing was written`,
    ],
    [
      '[{"frontmatter":{"id":0},"body":""}]',
      (origin) =>
        `sim project demo at ${origin}: the server sent a malformed issue (bad id "0"); nothing was written`,
    ],
  ];
  for (const [body, expected] of cases) {
    const origin = await givenServer(t, (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(body);
    });
    const error = await t.throwsAsync(backend(origin).listAll(), undefined, body);
    const message = expected(origin);
    if (typeof message === "string") t.is(error?.message, message, body);
    else t.regex(error?.message ?? "", message, body);
    if (body.startsWith("<")) t.true(error instanceof NotJsonError);
  }
});

test.serial(
  "a listing that never ends, however fast its issues come, is stopped at SVC_LISTING_TIMEOUT_MS",
  async (t) => {
    let sent = 0;
    let closed = false;
    let hungUp: () => void = () => {};
    const hangUp = new Promise<void>((resolve) => {
      hungUp = resolve;
    });
    const origin = await givenServer(t, (_req, res) => {
      res.on("error", () => {});
      res.on("close", () => {
        closed = true;
        hungUp();
      });
      res.writeHead(200, { "content-type": "application/json" });
      res.write("[");
      // New issues, one after another, as fast as the client reads: the listing never ends.
      const more = () => {
        while (!closed) {
          sent++;
          if (!res.write(`${sent > 1 ? "," : ""}${JSON.stringify(issue(sent, "endless"))}`))
            return void res.once("drain", more);
        }
      };
      more();
    });
    process.env.SVC_LISTING_TIMEOUT_MS = "500";
    let error: ListingTimeoutError | undefined;
    try {
      error = await t.throwsAsync(backend(origin).listAll(), { instanceOf: ListingTimeoutError });
    } finally {
      delete process.env.SVC_LISTING_TIMEOUT_MS;
    }
    t.regex(
      error?.message ?? "",
      new RegExp(
        `^listing the issues of sim project demo at ${origin.replaceAll(".", "\\.")} did not end within 500 ms ` +
          "\\(SVC_LISTING_TIMEOUT_MS, the longest svc gives one listing\\); svc stopped after \\d+ issues\\. ",
      ),
    );
    t.true(isServerFault(error));
    await hangUp;
    t.pass("svc hung up: the server stopped sending");
  },
);

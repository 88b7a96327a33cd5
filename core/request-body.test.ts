/** core/request-body.ts against a real HTTP server on a loopback port: what is kept, dropped and abandoned. */
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import test from "ava";
import { type BodyLimits, type ReceivedBody, readRequestBody } from "./request-body.js";

/** Sends `body` (chunked when `chunked`) to a server reading with `limits`; what the server received. */
async function receive(body: Buffer | undefined, limits: BodyLimits, chunked = false): Promise<ReceivedBody> {
  let received: ReceivedBody | undefined;
  const server = createServer((req, res) => {
    readRequestBody(req, limits).then((result) => {
      received = result;
      res.writeHead(result.tooLarge ? 413 : 200, result.abandoned ? { connection: "close" } : {});
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  try {
    await new Promise<void>((resolve) => {
      const headers: Record<string, string> = chunked
        ? { "transfer-encoding": "chunked" }
        : { "content-length": String(body?.length ?? 0) };
      const req = request({ host: "127.0.0.1", port, method: body ? "POST" : "GET", headers }, (res) => {
        res.resume();
        res.on("end", resolve);
      });
      // The server may answer and close before the whole of a large body is written.
      req.on("error", () => resolve());
      req.end(body);
    });
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  if (!received) throw new Error("the server read no body");
  return received;
}

test("a body within the limit is read whole, with a length or chunked", async (t) => {
  const body = Buffer.from("x".repeat(10_000));
  for (const chunked of [false, true]) {
    const received = await receive(body, { keepBytes: 20_000 }, chunked);
    t.deepEqual(received, { bytes: body, tooLarge: false, abandoned: false });
  }
});

test("a request without a body reads as empty at once", async (t) => {
  t.deepEqual(await receive(undefined, { keepBytes: 10 }), {
    bytes: Buffer.alloc(0),
    tooLarge: false,
    abandoned: false,
  });
});

test("a body over keepBytes but under drainBytes is read to its end and too large; the connection can stay", async (t) => {
  const received = await receive(
    Buffer.alloc(300_000, 1),
    { keepBytes: 100_000, drainBytes: 1_000_000 },
    true,
  );
  t.true(received.tooLarge);
  t.false(received.abandoned);
  t.true(received.bytes.length < 300_000);
});

test("a body over drainBytes is abandoned: by its declared length at once, or once that much arrived", async (t) => {
  const declared = await receive(Buffer.alloc(300_000, 1), { keepBytes: 1000, drainBytes: 100_000 });
  t.like(declared, { tooLarge: true, abandoned: true });
  t.is(declared.bytes.length, 0);
  const chunked = await receive(Buffer.alloc(300_000, 1), { keepBytes: 1000, drainBytes: 100_000 }, true);
  t.like(chunked, { tooLarge: true, abandoned: true });
});

/**
 * The simulator's issue listing is one unpaginated JSON array, so it has a byte cap of its own (256 MiB)
 * above the HTTP client's 32 MiB: a 40 MiB listing (the benchmark's 100,000 issues are ~45 MB) is read, and
 * one that announces more than 256 MiB is refused before its body is read.
 */
import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import test, { type ExecutionContext } from "ava";
import { HttpClient, ResponseTooLargeError } from "../../core/http.js";
import { SimBackend } from "./backend.js";

const MIB = 1024 * 1024;

async function givenServer(t: ExecutionContext, handler: RequestListener): Promise<string> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
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

test("a listing announcing more than 256 MiB is refused, naming the cap and how to raise it", async (t) => {
  const announced = 300 * MIB;
  const origin = await givenServer(t, (_req, res) => {
    res.on("error", () => {});
    res.writeHead(200, { "content-type": "application/json", "content-length": String(announced) });
    res.write("[");
  });
  const error = await t.throwsAsync(backend(origin).listAll(), { instanceOf: ResponseTooLargeError });
  t.is(
    error?.message,
    `the server at ${origin} announced ${announced} bytes (content-length) in answer to GET /projects/demo/issues, ` +
      "more than the 256 MiB svc accepts in one response; svc closed the connection without reading it. If " +
      "answers this large are expected, run the command again with e.g. SVC_HTTP_MAX_RESPONSE_MIB=512; if not, " +
      `report it to the admins of ${origin}`,
  );
});

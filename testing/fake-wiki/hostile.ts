/**
 * The fake wiki's hostile side, for the client's guards (issue 11 and Document 3 "Pagination rules"): the
 * hostile listings a test switches on (a cursor repeated forever, an endless walk, an oversized answer streamed
 * with backpressure), and the `_links.base` server that only counts who follows it.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import { requestEntry } from "../fake-server.js";
import { listenOnLoopback } from "../loopback.js";
import type { Call } from "./call.js";
import { type Answer, send } from "./http.js";
import { route } from "./router.js";
import type { FakeWikiRequest, HostileListing, StreamedAnswer } from "./types.js";

/** The hostile listing that applies to this request, if any. */
export function hostileFor(
  listing: HostileListing | undefined,
  method: string,
  url: URL,
): HostileListing | undefined {
  if (!listing || method !== "GET") return undefined;
  const on = listing.on ?? "pages";
  const path = url.pathname;
  if (on === "pages") return /^\/wiki\/api\/v2\/spaces\/[^/]+\/pages$/.test(path) ? listing : undefined;
  const lookup = url.searchParams.has("keys") || url.searchParams.has("ids");
  return path === "/wiki/api/v2/spaces" && !lookup ? listing : undefined;
}

/** The honest first result page, with its `_links.next` (and `Link`) replaced; or the oversized stream. */
export function hostileAnswer(hostile: HostileListing, call: Call): Answer {
  if (hostile.kind === "oversized") {
    return {
      status: 200,
      stream: { bytes: hostile.bytes, announce: hostile.announce ?? false },
      deliberate: "a hostile oversized listing (setHostileListing)",
    };
  }
  const cursor = call.url.searchParams.get("cursor");
  const first = new URL(call.url);
  first.searchParams.delete("cursor");
  const honest = route({ ...call, method: "GET", url: first });
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
    headers: { ...honest.headers, link: `<${next}>; rel="next", <${call.shapes.linksBase}>; rel="base"` },
    body: { ...body, results, _links: { ...body._links, next } },
  };
}

/** Sends `{"results":[` + whitespace + `]}`, `bytes` in all, with backpressure, until done or hung up on. */
export function streamJson(
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

/**
 * The server `_links.base` names by default, logging every request into `log`. It looks like a harmless empty
 * listing, so a client that follows it fails quietly, not loudly: only the hit counter gives it away.
 */
export async function startBaseServer(log: FakeWikiRequest[]): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    const entry = requestEntry(req, "", { answer: "" });
    entry.status = 200;
    log.push(entry);
    req.resume();
    send(res, { status: 200, body: { results: [], _links: {} } });
  });
  return { server, origin: await listenOnLoopback(server) };
}

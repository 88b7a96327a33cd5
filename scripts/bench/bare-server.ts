/**
 * The baseline for the simulator benchmark: a bare `node:http` server that reads each request body in full
 * and answers 200 with the constant JSON body read from the file named by its first argument.
 *
 * Usage: `node dist/scripts/bench/bare-server.js <body.json>`; prints `bare listening on http://127.0.0.1:<port>`
 * on stderr once bound to a free loopback port, and exits 0 on SIGTERM or SIGINT.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

const bodyFile = process.argv[2];
if (!bodyFile) {
  process.stderr.write("usage: bare-server.js <body.json>\n");
  process.exit(2);
}
const body = readFileSync(bodyFile);
const headers = { "content-type": "application/json; charset=utf-8", "content-length": String(body.length) };

const server = createServer({ keepAliveTimeout: 5000 }, (req, res) => {
  req.on("data", () => {});
  req.on("end", () => {
    res.writeHead(200, headers);
    res.end(body);
  });
});

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  process.stderr.write(`bare listening on http://127.0.0.1:${port}\n`);
});

const stop = () => {
  server.close(() => process.exit(0));
  server.closeIdleConnections();
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);

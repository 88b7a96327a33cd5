/**
 * Starting and stopping the fakes' HTTP servers: on `127.0.0.1`, a port the OS chooses, and closed with
 * every connection (a keep-alive socket left open would hold a test's teardown).
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Listens on `127.0.0.1:0`; resolves with `http://127.0.0.1:<port>`. */
export function listenOnLoopback(server: Server): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    });
  });
}

/** Closes the server and every connection it has, idle or not. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

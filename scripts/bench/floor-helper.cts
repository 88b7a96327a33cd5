#!/usr/bin/env node
/**
 * The floor of a no-op `git fetch` through a remote helper that node runs (the clone bench's "floor" row):
 * a helper that does no work at all. It speaks what git-remote-svc speaks on a no-op fetch
 * (gitremote-helpers(7) `capabilities`, `option`, `stateless-connect`; gitprotocol-v2 `ls-refs`), with the
 * same capability advertisement, and answers `ls-refs` with the commit in `SVC_FLOOR_TIP` as
 * `refs/heads/main`, from memory: no project, no cache, no server. What a fetch through it costs beyond the
 * helper's own start is git's part (the `git remote-<name>` wrapper, the connectivity check,
 * `git maintenance run --auto`) plus the protocol's turns, which any helper pays.
 *
 * A request other than `ls-refs` (git wants objects: the fetch is not a no-op) exits 1 with a message.
 * stdin is read with synchronous reads, as helper/bin.cts does, so that it costs no stream.
 */
import fs = require("node:fs");

function readFully(buffer: Buffer): boolean {
  for (let got = 0; got < buffer.length; ) {
    let read: number;
    try {
      read = fs.readSync(0, buffer, got, buffer.length - got, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EAGAIN") continue;
      throw error;
    }
    if (read === 0) return false;
    got += read;
  }
  return true;
}

function readLine(): string | undefined {
  const bytes: number[] = [];
  const byte = Buffer.alloc(1);
  for (;;) {
    if (!readFully(byte)) return bytes.length === 0 ? undefined : Buffer.from(bytes).toString("utf8");
    if (byte[0] === 0x0a) return Buffer.from(bytes).toString("utf8");
    bytes.push(byte[0] as number);
  }
}

/** The pkt-lines of one request up to its flush-pkt; undefined at the end of stdin. */
function readRequest(): string[] | undefined {
  const lines: string[] = [];
  for (;;) {
    const header = Buffer.alloc(4);
    if (!readFully(header)) return undefined;
    const length = Number.parseInt(header.toString("latin1"), 16);
    if (length === 0) return lines;
    if (length < 4) continue;
    const body = Buffer.alloc(length - 4);
    if (!readFully(body)) return undefined;
    lines.push(body.toString("utf8"));
  }
}

const pkt = (text: string) => `${(text.length + 4).toString(16).padStart(4, "0")}${text}`;

function serve(tip: string): number {
  for (;;) {
    const line = readLine();
    if (line === undefined || line === "") return 0;
    if (line === "capabilities") {
      fs.writeSync(1, "stateless-connect\nimport\npush\nrefspec refs/heads/*:refs/svcfloor/*\noption\n\n");
    } else if (line.startsWith("option ")) {
      fs.writeSync(1, "ok\n");
    } else if (line === "stateless-connect git-upload-pack") {
      const advert = ["version 2\n", "agent=git-remote-svc/floor\n", "ls-refs\n", "fetch=shallow filter\n"];
      advert.push("server-option\n", "object-format=sha1\n");
      fs.writeSync(1, `\n${advert.map(pkt).join("")}0000`);
      for (;;) {
        const request = readRequest();
        if (request === undefined) return 0;
        if (request[0] !== "command=ls-refs\n") {
          process.stderr.write(
            `svc floor helper: git asked for ${request[0]?.trim()}; only a no-op fetch is served\n`,
          );
          return 1;
        }
        fs.writeSync(1, `${pkt(`${tip} refs/heads/main\n`)}00000002`);
      }
    } else {
      process.stderr.write(`svc floor helper: unknown command ${JSON.stringify(line)}\n`);
      return 1;
    }
  }
}

const tip = process.env.SVC_FLOOR_TIP ?? "";
if (!/^[0-9a-f]{40}$/.test(tip)) {
  process.stderr.write("svc floor helper: SVC_FLOOR_TIP must be a commit id (40 hex digits)\n");
  process.exit(2);
}
process.exit(serve(tip));

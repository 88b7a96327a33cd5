/**
 * pkt-line framing and the helper's byte reader (helper/pktline.ts) against recorded git traffic and random
 * streams: the bytes `git clone --filter=blob:none` (git 2.39.5, protocol v2) wrote to `git upload-pack`
 * and the capability advertisement upload-pack answered with; the special lengths 0000-0002; a stream split
 * at any points reads as the unsplit one; any bytes give packets or a `PktLineError`, never another
 * failure or a wait on a stream that has ended; an announced length above 65520 is refused from its four
 * header bytes alone, so the reader never waits for (or holds) more than one maximal packet.
 */
import { PassThrough, Readable } from "node:stream";
import test from "ava";
import fc from "fast-check";
import { fuzzParams } from "../testing/fuzz.js";
import {
  ByteReader,
  DELIM,
  decodePktHeader,
  encodePkt,
  FLUSH,
  MAX_PKT_LENGTH,
  type Pkt,
  PktLineError,
  pktText,
  RESPONSE_END,
} from "./pktline.js";
import { CAPABILITY_ADVERTISEMENT, listRefsAnswer, parseRequest } from "./stateless-connect.js";

/**
 * What git 2.39.5 sent upload-pack for `git -c protocol.version=2 clone --filter=blob:none --no-checkout`
 * of a one-commit repository (recorded through an `ext::` transport that tee'd its stdin): an `ls-refs`
 * request, then a `fetch` request. `command=fetch` and the capabilities after it carry no newline.
 */
const RECORDED_CLONE_REQUESTS =
  "0014command=ls-refs\n0014agent=git/2.39.50016object-format=sha100010009peel\n000csymrefs\n000bunborn\n" +
  "0014ref-prefix HEAD\n001bref-prefix refs/heads/\n001aref-prefix refs/tags/\n0000" +
  "0011command=fetch0014agent=git/2.39.50016object-format=sha10001000dthin-pack000fno-progress" +
  "000dofs-delta0014filter blob:none0032want 6754d3d5677d6151913ec0fab6154596b782c117\n0009done\n0000";

/** `GIT_PROTOCOL=version=2 git upload-pack --advertise-refs --stateless-rpc` of git 2.39.5, as recorded. */
const RECORDED_ADVERTISEMENT =
  "000eversion 2\n0015agent=git/2.39.5\n0013ls-refs=unborn\n0020fetch=shallow wait-for-done\n" +
  "0012server-option\n0017object-format=sha1\n0010object-info\n0000";

/** The same, from upload-pack on a cache repository (`uploadpack.allowFilter=true`): `fetch` adds `filter`. */
const RECORDED_CACHE_ADVERTISEMENT =
  "000eversion 2\n0015agent=git/2.39.5\n0013ls-refs=unborn\n0027fetch=shallow wait-for-done filter\n" +
  "0012server-option\n0017object-format=sha1\n0010object-info\n0000";

/** A reader over `chunks`, each arriving as its own `data` event, then the end of the stream. */
function readerOf(chunks: readonly Buffer[]): ByteReader {
  return new ByteReader(Readable.from(chunks, { objectMode: true }));
}

/** `bytes` cut at `cuts` (offsets, any order, duplicates and out-of-range ones ignored). */
function split(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const at = [...new Set(cuts.filter((cut) => cut > 0 && cut < bytes.length))].sort((a, b) => a - b);
  return [0, ...at].map((start, i) => bytes.subarray(start, at[i] ?? bytes.length));
}

type Outcome = { pkts: { pkt: Pkt; raw: Buffer }[]; error?: unknown };

/** Every packet until the end of input or the first failure. */
async function readAll(reader: ByteReader): Promise<Outcome> {
  const pkts: { pkt: Pkt; raw: Buffer }[] = [];
  try {
    for (;;) {
      const next = await reader.readPkt();
      if (next === undefined) return { pkts };
      pkts.push(next);
    }
  } catch (error) {
    return { pkts, error };
  }
}

/** What a test compares: packets as plain values. */
function shown(pkts: readonly { pkt: Pkt }[]): string[] {
  return pkts.map(({ pkt }) => (pkt.type === "data" ? `data:${pkt.payload.toString("latin1")}` : pkt.type));
}

// ---------------------------------------------------------------------------------------------------------
// Recorded traffic.

test("recorded: git's two clone requests read as git framed them, and parseRequest reads their commands", async (t) => {
  const { pkts, error } = await readAll(readerOf([Buffer.from(RECORDED_CLONE_REQUESTS, "latin1")]));
  t.is(error, undefined);
  t.deepEqual(shown(pkts), [
    "data:command=ls-refs\n",
    "data:agent=git/2.39.5",
    "data:object-format=sha1",
    "delim",
    "data:peel\n",
    "data:symrefs\n",
    "data:unborn\n",
    "data:ref-prefix HEAD\n",
    "data:ref-prefix refs/heads/\n",
    "data:ref-prefix refs/tags/\n",
    "flush",
    "data:command=fetch",
    "data:agent=git/2.39.5",
    "data:object-format=sha1",
    "delim",
    "data:thin-pack",
    "data:no-progress",
    "data:ofs-delta",
    "data:filter blob:none",
    "data:want 6754d3d5677d6151913ec0fab6154596b782c117\n",
    "data:done\n",
    "flush",
  ]);
  t.is(Buffer.concat(pkts.map((p) => p.raw)).toString("latin1"), RECORDED_CLONE_REQUESTS);
  const flush = pkts.findIndex((p) => p.pkt.type === "flush");
  const lines = (from: number, to: number) =>
    pkts.slice(from, to).flatMap(({ pkt }) => (pkt.type === "data" ? [pktText(pkt) as string] : []));
  t.deepEqual(parseRequest(lines(0, flush)), { command: "ls-refs", wants: [], filter: undefined });
  t.deepEqual(parseRequest(lines(flush + 1, pkts.length)), {
    command: "fetch",
    wants: ["6754d3d5677d6151913ec0fab6154596b782c117"],
    filter: "blob:none",
  });
});

test("recorded: upload-pack's v2 advertisement ends with a flush, and encodePkt writes each line as git did", async (t) => {
  const { pkts, error } = await readAll(readerOf([Buffer.from(RECORDED_ADVERTISEMENT, "latin1")]));
  t.is(error, undefined);
  t.deepEqual(shown(pkts).slice(0, 2), ["data:version 2\n", "data:agent=git/2.39.5\n"]);
  t.is(pkts.at(-1)?.pkt.type, "flush");
  const rebuilt = pkts.map(({ pkt }) => (pkt.type === "data" ? encodePkt(pkt.payload) : FLUSH));
  t.is(Buffer.concat(rebuilt).toString("latin1"), RECORDED_ADVERTISEMENT);
  t.is(
    encodePkt("want 6754d3d5677d6151913ec0fab6154596b782c117\n").toString(),
    "0032want 6754d3d5677d6151913ec0fab6154596b782c117\n",
  );
});

test("svc's own advertisement offers only what git 2.39.5's upload-pack advertised on a cache, ls-refs and fetch's filter included", async (t) => {
  const capabilities = async (bytes: Buffer) => {
    const { pkts, error } = await readAll(readerOf([bytes]));
    t.is(error, undefined);
    t.is(pkts.at(-1)?.pkt.type, "flush");
    return new Map(
      pkts.flatMap(({ pkt }) => {
        const text = pktText(pkt);
        if (text === undefined || text.startsWith("agent=")) return [];
        const [name = "", value = ""] = text.split("=");
        return [[name, value.split(" ").filter((word) => word !== "")] as const];
      }),
    );
  };
  const git = await capabilities(Buffer.from(RECORDED_CACHE_ADVERTISEMENT, "latin1"));
  const svc = await capabilities(CAPABILITY_ADVERTISEMENT);
  t.deepEqual([...svc.keys()], ["version 2", "ls-refs", "fetch", "server-option", "object-format"]);
  for (const [name, features] of svc) {
    t.true(git.has(name), name);
    for (const feature of features) t.true(git.get(name)?.includes(feature), `${name}=${feature}`);
  }
  t.deepEqual(svc.get("fetch"), ["shallow", "filter"]);
});

test("ls-refs of the recorded clone request: HEAD naming main, then main; ref-prefix filters; a flush ends it", async (t) => {
  const tip = "6754d3d5677d6151913ec0fab6154596b782c117";
  const answer = async (lines: string[]) =>
    shown((await readAll(readerOf([listRefsAnswer(lines, tip)]))).pkts);
  t.deepEqual(
    await answer([
      "command=ls-refs",
      "peel",
      "symrefs",
      "unborn",
      "ref-prefix HEAD",
      "ref-prefix refs/heads/",
      "ref-prefix refs/tags/",
    ]),
    [`data:${tip} HEAD symref-target:refs/heads/main\n`, `data:${tip} refs/heads/main\n`, "flush"],
  );
  // What git fetch asks (no HEAD), and ls-remote (no prefix, no symrefs).
  t.deepEqual(
    await answer([
      "command=ls-refs",
      "peel",
      "symrefs",
      "ref-prefix refs/heads/main",
      "ref-prefix refs/tags/",
    ]),
    [`data:${tip} refs/heads/main\n`, "flush"],
  );
  t.deepEqual(await answer(["command=ls-refs"]), [
    `data:${tip} HEAD\n`,
    `data:${tip} refs/heads/main\n`,
    "flush",
  ]);
  t.deepEqual(await answer(["command=ls-refs", "ref-prefix refs/tags/"]), ["flush"]);
});

test("decodePktHeader: 0000 flush, 0001 delim, 0002 response-end, 0003 refused, 0004 empty data, fff0 the largest", (t) => {
  t.is(decodePktHeader("0000"), "flush");
  t.is(decodePktHeader("0001"), "delim");
  t.is(decodePktHeader("0002"), "response-end");
  t.is(decodePktHeader("0003"), undefined);
  t.is(decodePktHeader("0004"), 4);
  t.is(decodePktHeader("000a"), 10);
  t.is(decodePktHeader("fff0"), MAX_PKT_LENGTH);
  t.is(decodePktHeader("fff1"), undefined);
  t.is(decodePktHeader("ffff"), undefined);
  // git writes lower-case hex; anything else is refused rather than guessed at.
  for (const bad of ["000A", "FFF0", "00 4", "+004", "0x04", "-001", "00g4", "004", "00004", ""])
    t.is(decodePktHeader(bad), undefined, bad);
  t.deepEqual([FLUSH, DELIM, RESPONSE_END].map(String), ["0000", "0001", "0002"]);
});

test("0004 is a data packet with an empty payload; pktText strips one trailing newline only", async (t) => {
  const { pkts } = await readAll(readerOf([Buffer.from("00040005\n0006\n\n0000")]));
  t.deepEqual(shown(pkts), ["data:", "data:\n", "data:\n\n", "flush"]);
  t.deepEqual(
    pkts.map(({ pkt }) => pktText(pkt)),
    ["", "", "\n", undefined],
  );
});

test("bad headers and truncated streams are PktLineErrors that say what was wrong", async (t) => {
  const cases: [string, string][] = [
    ["0003", 'bad pkt-line header "0003"'],
    ["fff1xxxx", 'bad pkt-line header "fff1"'],
    ["zzzz", 'bad pkt-line header "zzzz"'],
    ["00", "input ended inside a pkt-line header"],
    ["0009ab", "input ended inside a pkt-line"],
    ["0000000", "input ended inside a pkt-line header"],
  ];
  for (const [input, message] of cases) {
    const { error } = await readAll(readerOf([Buffer.from(input, "latin1")]));
    t.true(error instanceof PktLineError, input);
    t.is((error as Error).message, message, input);
  }
});

test("encodePkt takes payloads up to 65516 bytes and refuses a longer one with a PktLineError", (t) => {
  t.is(
    encodePkt(Buffer.alloc(MAX_PKT_LENGTH - 4))
      .subarray(0, 4)
      .toString(),
    "fff0",
  );
  const error = t.throws(() => encodePkt(Buffer.alloc(MAX_PKT_LENGTH - 3)), { instanceOf: PktLineError });
  t.is(error?.message, "pkt-line payload of 65517 bytes is too long");
});

test("an announced length over 65520 is refused from its header alone, without waiting for more input", async (t) => {
  const stream = new PassThrough();
  t.teardown(() => stream.destroy());
  const reader = new ByteReader(stream);
  stream.write("ffff");
  // The stream stays open: a reader that waited for 65535 bytes would never settle.
  await t.throwsAsync(reader.readPkt(), { instanceOf: PktLineError, message: 'bad pkt-line header "ffff"' });
});

test("a packet of the largest length waits for its bytes and no more, then reads", async (t) => {
  const stream = new PassThrough();
  const reader = new ByteReader(stream);
  const payload = Buffer.alloc(MAX_PKT_LENGTH - 4, "x");
  const packet = encodePkt(payload);
  stream.write(packet.subarray(0, MAX_PKT_LENGTH - 1));
  let settled = false;
  const read = reader.readPkt().finally(() => {
    settled = true;
  });
  for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
  t.false(settled, "one byte of the packet is still missing");
  stream.write(packet.subarray(MAX_PKT_LENGTH - 1));
  stream.end("0000");
  const next = await read;
  t.deepEqual(next?.pkt, { type: "data", payload });
  t.deepEqual((await reader.readPkt())?.pkt, { type: "flush" });
  t.is(await reader.readPkt(), undefined);
});

test("the helper's text phase and pkt-line phase share one stream: a command line, then packets", async (t) => {
  const bytes = Buffer.from(`stateless-connect git-upload-pack\n${RECORDED_CLONE_REQUESTS}`, "latin1");
  for (let cut = 1; cut < bytes.length; cut += 7) {
    const reader = readerOf(split(bytes, [cut, cut + 3]));
    t.is(await reader.readLine(), "stateless-connect git-upload-pack");
    const { pkts, error } = await readAll(reader);
    t.is(error, undefined);
    t.is(Buffer.concat(pkts.map((p) => p.raw)).toString("latin1"), RECORDED_CLONE_REQUESTS);
  }
});

test("a failing stream fails the read with the stream's error", async (t) => {
  const stream = new PassThrough();
  const reader = new ByteReader(stream);
  stream.write("00");
  const read = reader.readPkt();
  stream.destroy(new Error("read ECONNRESET"));
  await t.throwsAsync(read, { message: "read ECONNRESET" });
});

// ---------------------------------------------------------------------------------------------------------
// Properties.

const anyPkt: fc.Arbitrary<Pkt> = fc.oneof(
  fc.constant<Pkt>({ type: "flush" }),
  fc.constant<Pkt>({ type: "delim" }),
  fc.constant<Pkt>({ type: "response-end" }),
  fc
    .oneof(
      fc.uint8Array({ maxLength: 200 }),
      fc.integer({ min: 0, max: MAX_PKT_LENGTH - 4 }).map((n) => new Uint8Array(n).fill(0x61)),
    )
    .map((bytes): Pkt => ({ type: "data", payload: Buffer.from(bytes) })),
);

function encoded(pkt: Pkt): Buffer {
  if (pkt.type === "flush") return FLUSH;
  if (pkt.type === "delim") return DELIM;
  if (pkt.type === "response-end") return RESPONSE_END;
  return encodePkt(pkt.payload);
}

const cuts = fc.array(fc.nat(), { maxLength: 12 });

test("property: encoded packets split at any points read back as the packets, raw bytes included", async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.array(anyPkt, { maxLength: 8 }), cuts, async (pkts, at) => {
      const bytes = Buffer.concat(pkts.map(encoded));
      const { pkts: read, error } = await readAll(readerOf(split(bytes, at)));
      if (error !== undefined) throw error;
      if (read.length !== pkts.length) return false;
      return read.every(
        (next, i) =>
          next.raw.equals(encoded(pkts[i] as Pkt)) &&
          next.pkt.type === pkts[i]?.type &&
          (next.pkt.type !== "data" || next.pkt.payload.equals((pkts[i] as { payload: Buffer }).payload)),
      );
    }),
    fuzzParams(100),
  );
  t.pass();
});

test("property: any bytes split anywhere read as the unsplit bytes: the same packets, then the same end or PktLineError", async (t) => {
  const noise = fc.oneof(
    fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
    // Mostly well-formed: valid packets with stray hex or a cut-off tail mixed in.
    fc
      .array(
        fc.oneof(
          anyPkt.map(encoded),
          fc.stringMatching(/^[0-9a-fA-F]{0,5}$/).map((s) => Buffer.from(s)),
        ),
        {
          maxLength: 6,
        },
      )
      .map((parts) => Buffer.concat(parts)),
  );
  await fc.assert(
    fc.asyncProperty(noise, cuts, async (bytes, at) => {
      const whole = await readAll(readerOf([bytes]));
      const pieces = await readAll(readerOf(split(bytes, at)));
      for (const outcome of [whole, pieces]) {
        if (outcome.error !== undefined && !(outcome.error instanceof PktLineError)) throw outcome.error;
        if (outcome.error instanceof PktLineError && outcome.error.message === "") return false;
      }
      const consumed = Buffer.concat(whole.pkts.map((p) => p.raw));
      // What was read is the start of the input; a clean end means all of it.
      if (!bytes.subarray(0, consumed.length).equals(consumed)) return false;
      if (whole.error === undefined && consumed.length !== bytes.length) return false;
      return (
        JSON.stringify(shown(whole.pkts)) === JSON.stringify(shown(pieces.pkts)) &&
        String(whole.error) === String(pieces.error)
      );
    }),
    fuzzParams(200),
  );
  t.pass();
});

test("property: a stream of packets cut off anywhere inside a packet is a PktLineError, never a wait", async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.array(anyPkt, { minLength: 1, maxLength: 6 }), fc.nat(), async (pkts, at) => {
      const bytes = Buffer.concat(pkts.map(encoded));
      // The offset where each packet ends.
      const ends: number[] = [];
      for (const pkt of pkts) ends.push((ends.at(-1) ?? 0) + encoded(pkt).length);
      const cut = at % bytes.length;
      const { pkts: read, error } = await readAll(readerOf([bytes.subarray(0, cut)]));
      if (cut === 0 || ends.includes(cut))
        return error === undefined && read.length === ends.indexOf(cut) + 1;
      return error instanceof PktLineError && /^input ended inside a pkt-line/.test(error.message);
    }),
    fuzzParams(200),
  );
  t.pass();
});

test("property: every header above 65520 or with a non-hex byte is refused, whatever follows", async (t) => {
  const header = fc.oneof(
    fc.integer({ min: MAX_PKT_LENGTH + 1, max: 0xffff }).map((n) => n.toString(16)),
    fc.string({
      unit: fc.constantFrom(..."0123456789abcdefABCDEF xg-+\n\0\u00ff"),
      minLength: 4,
      maxLength: 4,
    }),
  );
  await fc.assert(
    fc.asyncProperty(header, fc.uint8Array({ maxLength: 40 }), async (head, rest) => {
      const bytes = Buffer.concat([Buffer.from(head, "latin1"), Buffer.from(rest)]);
      const decoded = decodePktHeader(head);
      const { pkts, error } = await readAll(readerOf([bytes]));
      if (decoded !== undefined) return /^[0-9a-f]{4}$/.test(head); // a valid header: other properties
      return (
        pkts.length === 0 && error instanceof PktLineError && error.message.startsWith("bad pkt-line header")
      );
    }),
    fuzzParams(300),
  );
  t.pass();
});

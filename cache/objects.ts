/**
 * Git objects written in-process (DESIGN.md §3): blob ids are SHA-1 of `blob <len>\0<bytes>`; trees and
 * commits are tiny and are written as loose objects without their blobs, which `git fast-import` refuses to
 * do (notes/push-and-lazy-cache.md A1).
 */
import type { Hash } from "node:crypto";
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

// node:crypto and node:zlib are loaded on first use: a no-op fetch (one helper start) hashes and deflates
// nothing, and loading the two cost it ~5 ms.
const require = createRequire(import.meta.url);
let crypto: typeof import("node:crypto") | undefined;
let zlib: typeof import("node:zlib") | undefined;

export function sha1(): Hash {
  crypto ??= require("node:crypto") as typeof import("node:crypto");
  return crypto.createHash("sha1");
}

function deflateSync(data: Buffer, options: { level: number }): Buffer {
  zlib ??= require("node:zlib") as typeof import("node:zlib");
  return zlib.deflateSync(data, options);
}

export type ObjectType = "blob" | "tree" | "commit";

export function objectHeader(type: ObjectType, length: number): Buffer {
  return Buffer.from(`${type} ${length}\0`);
}

export function hashObject(type: ObjectType, content: Buffer): string {
  return sha1().update(objectHeader(type, content.length)).update(content).digest("hex");
}

/** Writes a loose object (deflated, via a temporary file and rename); does nothing if it exists. */
export function writeLooseObject(repo: string, type: ObjectType, content: Buffer): string {
  const oid = hashObject(type, content);
  const dir = join(repo, "objects", oid.slice(0, 2));
  const path = join(dir, oid.slice(2));
  if (existsSync(path)) return oid;
  mkdirSync(dir, { recursive: true });
  const temp = `${path}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  writeFileSync(
    temp,
    deflateSync(Buffer.concat([objectHeader(type, content.length), content]), { level: 1 }),
    {
      mode: 0o444,
    },
  );
  renameSync(temp, path);
  return oid;
}

export interface TreeEntry {
  readonly mode: "100644" | "40000";
  readonly name: string;
  readonly oid: string;
}

/** Git's tree order: by name bytes, a directory compared as if its name ended with `/`. */
function treeSortKey(entry: TreeEntry): Buffer {
  return Buffer.from(entry.mode === "40000" ? `${entry.name}/` : entry.name);
}

export function encodeTree(entries: readonly TreeEntry[]): Buffer {
  // Plain string order is byte order for ASCII names (the usual case: `0042.md`); otherwise sort keys
  // are made once per entry, not once per comparison.
  const keyed = entries.map((entry) => ({
    entry,
    text: entry.mode === "40000" ? `${entry.name}/` : entry.name,
  }));
  if (keyed.every(({ text }) => /^[\x20-\x7e]*$/.test(text))) {
    keyed.sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
  } else {
    const bytes = new Map(keyed.map(({ entry }) => [entry, treeSortKey(entry)]));
    keyed.sort((a, b) => Buffer.compare(bytes.get(a.entry) as Buffer, bytes.get(b.entry) as Buffer));
  }
  let size = 0;
  for (const { entry } of keyed) size += Buffer.byteLength(`${entry.mode} ${entry.name}`) + 21;
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const { entry } of keyed) {
    at += out.write(`${entry.mode} ${entry.name}\0`, at);
    at += out.write(entry.oid, at, "hex");
  }
  return out;
}

export interface CommitFields {
  readonly tree: string;
  readonly parents: readonly string[];
  /** `Name <email>` */
  readonly identity: string;
  /** Seconds since the epoch. */
  readonly time: number;
  readonly message: string;
}

export function encodeCommit(commit: CommitFields): Buffer {
  const lines = [`tree ${commit.tree}`, ...commit.parents.map((parent) => `parent ${parent}`)];
  lines.push(
    `author ${commit.identity} ${commit.time} +0000`,
    `committer ${commit.identity} ${commit.time} +0000`,
  );
  return Buffer.from(`${lines.join("\n")}\n\n${commit.message}`);
}

/**
 * Git objects written in-process (DESIGN.md §3): blob ids are SHA-1 of `blob <len>\0<bytes>`; trees and
 * commits are tiny and are written as loose objects without their blobs, which `git fast-import` refuses to
 * do (notes/push-and-lazy-cache.md A1).
 */
import type { Hash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { writeFileAtomically } from "../core/atomic-file.js";

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

/** The data of the zlib stream at the start of `data`; bytes after the stream's end are ignored. */
export function inflate(data: Buffer): Buffer {
  zlib ??= require("node:zlib") as typeof import("node:zlib");
  return zlib.inflateSync(data);
}

export type ObjectType = "blob" | "tree" | "commit";

export function objectHeader(type: ObjectType, length: number): Buffer {
  return Buffer.from(`${type} ${length}\0`);
}

export function hashObject(type: ObjectType, content: Buffer): string {
  return sha1().update(objectHeader(type, content.length)).update(content).digest("hex");
}

/**
 * Writes a loose object (via a temporary file and rename); does nothing if it exists. A tree is stored
 * without compression (zlib level 0): most of its bytes are object ids, which do not compress, and deflating
 * a state tree of 10,000 entries (350 KB) cost 5 ms of every push for a third of its size, until `git
 * maintenance` packs it as a delta of a few hundred bytes (cache.ts consolidateIfDue).
 */
export function writeLooseObject(repo: string, type: ObjectType, content: Buffer): string {
  const oid = hashObject(type, content);
  if (!existsSync(loosePath(repo, oid))) {
    const raw = Buffer.concat([objectHeader(type, content.length), content]);
    writeLooseFile(repo, oid, deflateSync(raw, { level: type === "tree" ? 0 : 1 }));
  }
  return oid;
}

function loosePath(repo: string, oid: string): string {
  return join(repo, "objects", oid.slice(0, 2), oid.slice(2));
}

/** The content of the loose object `oid` of `repo` if it is one and has `type`, else undefined. */
export function readLooseObject(repo: string, oid: string, type: ObjectType): Buffer | undefined {
  let raw: Buffer;
  try {
    raw = inflate(readFileSync(loosePath(repo, oid)));
  } catch {
    return undefined;
  }
  const nul = raw.indexOf(0);
  const header = raw.subarray(0, nul).toString("latin1");
  const content = raw.subarray(nul + 1);
  return header === `${type} ${content.length}` ? content : undefined;
}

/**
 * Stores `deflated`, the bytes of a loose object file (another repository's copy of `oid`, which the caller
 * has checked), read-only as git makes them and atomically, not synced (as git does not sync one by
 * default); does nothing if the object is there.
 */
export function writeLooseFile(repo: string, oid: string, deflated: Buffer): void {
  const path = loosePath(repo, oid);
  if (existsSync(path)) return;
  mkdirSync(join(repo, "objects", oid.slice(0, 2)), { recursive: true });
  writeFileAtomically(path, deflated, { mode: 0o444, durable: false });
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

/** A commit object's header lines (continuation lines as they are) and its message bytes. */
function commitParts(raw: Buffer): { lines: string[]; message: Buffer } {
  const split = raw.indexOf("\n\n");
  return {
    lines: raw.toString("utf8", 0, split === -1 ? raw.length : split).split("\n"),
    message: split === -1 ? Buffer.alloc(0) : raw.subarray(split + 2),
  };
}

/** A commit object that is no commit as git reads one. */
export class MalformedCommitError extends Error {}

/** A commit as git reads it (parse_commit_buffer): the tree on its first line, then its parents. */
export interface Commit {
  readonly tree: string;
  readonly parents: readonly string[];
  /**
   * The committer time (seconds; git's order of a walk), as git's parse_commit_date reads it: 0 when the
   * author and committer lines are not right after the parents; undefined when git reads it its own way (a
   * sign, a number past 2^53).
   */
  readonly time: number | undefined;
}

/** The tree, parents and committer time of the commit object `content`; throws MalformedCommitError. */
export function parseCommit(content: Buffer): Commit {
  const { lines } = commitParts(content);
  const tree = /^tree ([0-9a-f]{40})$/.exec(lines[0] ?? "")?.[1];
  if (!tree) throw new MalformedCommitError("the commit names no tree on its first line");
  let at = 1;
  const parents: string[] = [];
  for (; lines[at]?.startsWith("parent "); at++) {
    const parent = /^parent ([0-9a-f]{40})$/.exec(lines[at] as string)?.[1];
    if (!parent) throw new MalformedCommitError("the commit has a malformed parent");
    parents.push(parent);
  }
  return { tree, parents, time: commitTime(lines[at], lines[at + 1]) };
}

/** git's parse_commit_date: the number after the last `>` of the committer line that follows the author's. */
function commitTime(author: string | undefined, committer: string | undefined): number | undefined {
  if (!author?.startsWith("author") || !committer?.startsWith("committer")) return 0;
  const close = committer.lastIndexOf(">");
  if (close === -1) return 0;
  const digits = /^[ \t\v\f\r]*(\+|-)?(\d*)/.exec(committer.slice(close + 1));
  const time = Number(digits?.[2] || "0");
  return digits?.[1] === "-" || !Number.isSafeInteger(time) ? undefined : time;
}

/** A commit object's headers as they are written, for rewriting it (helper/import.ts). */
export interface CommitHeaders {
  /** Every `parent` header's value, in order. */
  readonly parents: string[];
  /** The last `author` header's value (`Name <email> <time> <zone>`), "" when there is none. */
  readonly author: string;
  readonly committer: string;
  readonly encoding: string | undefined;
  /** Headers other than tree, parent, author, committer and encoding (`gpgsig`, `mergetag`, …). */
  readonly unsupportedHeaders: string[];
  readonly message: Buffer;
}

/** The headers of a raw commit object (up to the first blank line) and its message (the bytes after it). */
export function parseCommitObject(raw: Buffer): CommitHeaders {
  const { lines, message } = commitParts(raw);
  const parents: string[] = [];
  let author = "";
  let committer = "";
  let encoding: string | undefined;
  const unsupportedHeaders: string[] = [];
  for (const line of lines) {
    if (line.startsWith(" ")) continue;
    const space = line.indexOf(" ");
    const name = line.slice(0, space);
    const value = line.slice(space + 1);
    if (name === "parent") parents.push(value);
    else if (name === "author") author = value;
    else if (name === "committer") committer = value;
    else if (name === "encoding") encoding = value;
    else if (name !== "tree") unsupportedHeaders.push(name);
  }
  return { parents, author, committer, encoding, unsupportedHeaders, message };
}

/** `Name <email>` of an author or committer header's value (`Name <email> <time> <zone>`), or undefined. */
export function identityOf(value: string): string | undefined {
  const match = /^(.*) <([^>\n]*)> \d+ [+-]\d{4}$/.exec(value);
  return match ? `${match[1]} <${match[2]}>` : undefined;
}

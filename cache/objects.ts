/**
 * Git objects written in-process (DESIGN.md §3): blob ids are SHA-1 of `blob <len>\0<bytes>`; trees and
 * commits are tiny and are written as loose objects without their blobs, which `git fast-import` refuses to
 * do (notes/push-and-lazy-cache.md A1).
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";

export type ObjectType = "blob" | "tree" | "commit";

export function objectHeader(type: ObjectType, length: number): Buffer {
  return Buffer.from(`${type} ${length}\0`);
}

export function hashObject(type: ObjectType, content: Buffer): string {
  return createHash("sha1").update(objectHeader(type, content.length)).update(content).digest("hex");
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
  const sorted = [...entries].sort((a, b) => Buffer.compare(treeSortKey(a), treeSortKey(b)));
  return Buffer.concat(
    sorted.flatMap((entry) => [Buffer.from(`${entry.mode} ${entry.name}\0`), Buffer.from(entry.oid, "hex")]),
  );
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

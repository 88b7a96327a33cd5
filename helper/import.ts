/**
 * `import` (git with `protocol.version=0`, DESIGN.md §4): the cache's history as a fast-import stream with
 * the blobs inline, written to the private ref `refs/svc/<remote>/main`.
 *
 * The stream reproduces each commit's tree, parents, author, committer and message byte for byte, so the
 * commit ids equal the cache's and a v0 clone can later fetch with v2 and push. Commits carrying headers
 * fast-import cannot write (`gpgsig`, `mergetag`) would get other ids; such commits only enter the cache by
 * push, and the helper says so on stderr when it meets one.
 */
import type { Writable } from "node:stream";
import type { ProjectCache } from "../cache/cache.js";
import { type CommitHeaders, parseCommitObject } from "../git/objects.js";
import { parseDiffTree, parseRevList, readObjects, runGit, type TreeChange } from "../git/plumbing.js";

/** A path as fast-import reads it: C-quoted when it contains a newline, a quote or a backslash. */
export function quotePath(path: string): string {
  if (!/["\\\n]/.test(path) && !path.startsWith('"')) return path;
  return `"${path.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
}

export interface ImportOptions {
  readonly cache: ProjectCache;
  readonly ref: string;
  /** The commit the user's repo already has at `ref`, if any: the stream starts after it. */
  readonly have: string | undefined;
  readonly output: Writable;
  readonly log: (message: string) => void;
}

/** The commits from `have` (exclusive, when the cache's history holds it) to `tip`, parents first. */
async function commitsToImport(
  cache: ProjectCache,
  tip: string,
  have: string | undefined,
): Promise<string[]> {
  if (have) {
    const known = await runGit(cache.repo, ["merge-base", "--is-ancestor", have, tip]).then(
      () => true,
      () => false,
    );
    if (!known) have = undefined;
  }
  const revList = await runGit(cache.repo, [
    "rev-list",
    "--reverse",
    "--topo-order",
    tip,
    ...(have ? [`^${have}`] : []),
  ]);
  return parseRevList(revList.stdout);
}

/** Each commit's changes against its first parent (against nothing for a root). */
async function changesOf(
  cache: ProjectCache,
  commitIds: readonly string[],
  parsed: ReadonlyMap<string, CommitHeaders>,
): Promise<Map<string, TreeChange[]>> {
  const diffInput = commitIds.map((oid) => {
    const parent = parsed.get(oid)?.parents[0];
    return parent ? `${oid} ${parent}` : oid;
  });
  return parseDiffTree(
    (
      await runGit(cache.repo, ["diff-tree", "--stdin", "-z", "-r", "--root", "--always", "--no-renames"], {
        input: `${diffInput.join("\n")}\n`,
      })
    ).stdout,
  );
}

/** The contents of every blob the changes add or modify: from the cache database, else its repo. */
async function blobContents(
  cache: ProjectCache,
  diffs: ReadonlyMap<string, readonly TreeChange[]>,
): Promise<Map<string, Buffer>> {
  const blobIds = new Set<string>();
  for (const changes of diffs.values()) {
    for (const change of changes)
      if (change.status !== "D" && change.mode !== "160000") blobIds.add(change.oid);
  }
  return cache.blobContents(blobIds);
}

/** One commit's fast-import `commit` command (a `reset` first for a second root), its changes inline. */
function writeCommit(
  write: (data: string | Buffer) => void,
  ref: string,
  commit: CommitHeaders,
  index: number,
  marks: ReadonlyMap<string, number>,
  changes: readonly TreeChange[],
  contents: ReadonlyMap<string, Buffer>,
): void {
  const mark = index + 1;
  // Without `from`, fast-import would continue the branch it built so far: a second root needs a reset.
  if (commit.parents.length === 0 && index > 0) write(`reset ${ref}\n\n`);
  write(`commit ${ref}\nmark :${mark}\nauthor ${commit.author}\ncommitter ${commit.committer}\n`);
  if (commit.encoding) write(`encoding ${commit.encoding}\n`);
  write(`data ${commit.message.length}\n`);
  write(commit.message);
  write("\n");
  commit.parents.forEach((parent, p) => {
    const from = marks.has(parent) ? `:${marks.get(parent)}` : parent;
    write(`${p === 0 ? "from" : "merge"} ${from}\n`);
  });
  for (const change of changes) {
    if (change.status === "D") {
      write(`D ${quotePath(change.path)}\n`);
      continue;
    }
    const content = contents.get(change.oid);
    if (!content)
      throw new Error(
        `blob ${change.oid} of ${change.path} is neither in the cache database nor in its repo`,
      );
    write(`M ${change.mode} inline ${quotePath(change.path)}\ndata ${content.length}\n`);
    write(content);
    write("\n");
  }
  write("\n");
}

export async function writeImportStream(options: ImportOptions): Promise<{ commits: number; blobs: number }> {
  const { cache, ref, output } = options;
  const tip = cache.tip();
  const write = (data: string | Buffer) => output.write(data);
  write("feature done\n");
  if (!tip) {
    write("done\n");
    return { commits: 0, blobs: 0 };
  }
  const commitIds = await commitsToImport(cache, tip, options.have);
  const commitObjects = await readObjects(cache.repo, commitIds);
  const parsed = new Map(
    commitIds.map((oid) => [oid, parseCommitObject(commitObjects.get(oid) ?? Buffer.alloc(0))]),
  );
  const diffs = await changesOf(cache, commitIds, parsed);
  const contents = await blobContents(cache, diffs);

  const marks = new Map<string, number>();
  commitIds.forEach((oid, index) => {
    const commit = parsed.get(oid);
    if (!commit) return;
    if (commit.unsupportedHeaders.length > 0) {
      options.log(
        `svc: commit ${oid.slice(0, 12)} has ${commit.unsupportedHeaders.join(", ")}; protocol v0 cannot reproduce it, ` +
          "so its id will differ: fetch with protocol v2 (the default) instead",
      );
    }
    marks.set(oid, index + 1);
    writeCommit(write, ref, commit, index, marks, diffs.get(oid) ?? [], contents);
  });
  write("done\n");
  return { commits: commitIds.length, blobs: contents.size };
}

/**
 * The oldest Node svc runs on, checked by both executables (cli/bin.cts, helper/bin.cts) before anything
 * else and reported by `svc doctor`. CommonJS and free of imports: the helper checks it before it answers
 * git's first question.
 *
 * 22.16: SQLite is node's own `node:sqlite` (core/sqlite.ts), whose busy timeout, `isTransaction`,
 * `columns()`, `setReturnArrays()` and `backup()` svc uses arrived in 22.16.0 (Node 20 has no
 * `node:sqlite`). It is also the oldest Node the test matrix runs (`npm run test:matrix`).
 */

/** [major, minor] of the oldest Node svc runs on. */
const MIN_NODE = [22, 16] as const;

/** Why this Node cannot run svc (`version`: `process.versions.node`), or undefined when it can. */
function nodeRefusal(
  version: string = process.versions.node,
  execPath: string = process.execPath,
): string | undefined {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  if (major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1])) return undefined;
  return (
    `svc needs Node ${MIN_NODE.join(".")} or later, and this is Node ${version} (${execPath}); ` +
    "install Node 24 LTS (or 22.16+) and put it first on PATH, then run the same command again"
  );
}

export = { MIN_NODE, nodeRefusal };

/**
 * `npm run demo` (scripts/demo.ts) as README.md offers it: it ends well, and its tour includes a comment round
 * trip: a new file under `comments/0001/` that `git push` posts and `git pull` brings back as `<id>.md` with
 * the server's frontmatter. Each printed command is checked against the tour's (the demo runs what it prints,
 * a shell line with `sh -c`). The demo's own simulator and temporary folder; its output read as a user sees it.
 */
import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import { repoRoot } from "../testing/paths.js";
import { givenTempDir } from "../testing/sim.js";

/** The demo's stdout and stderr as one text, in the order written, and its exit code. */
async function runDemo(dir: string): Promise<{ code: number | null; output: string }> {
  const file = join(dir, "output");
  const fd = openSync(file, "w");
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.execPath, [join(repoRoot, "dist", "scripts", "demo.js")], {
        stdio: ["ignore", fd, fd],
      });
      child.on("error", reject);
      child.on("close", resolve);
    });
    return { code, output: readFileSync(file, "utf8") };
  } finally {
    closeSync(fd);
  }
}

test("npm run demo ends well and shows a comment round trip: a new file pushed, pulled back as <id>.md", async (t) => {
  const { code, output } = await runDemo(givenTempDir(t));
  t.is(code, 0, output);
  t.true(
    output.endsWith("svc demo: done; the simulator is stopped and the temporary folder removed\n"),
    output,
  );

  const tour = output.slice(output.indexOf("\n$ ls comments/0001\n"));
  const id =
    /svc: posted comment (\d+) from comments\/0001\/reply\.md \(it becomes comments\/0001\/\1\.md\)/.exec(
      tour,
    )?.[1];
  t.truthy(id, tour);
  t.deepEqual(
    tour.split("\n").filter((line) => line.startsWith("$ ")),
    [
      "$ ls comments/0001",
      "$ printf 'Confirmed: a password with a colon fails the same way.\\n' > comments/0001/reply.md",
      "$ git add comments/0001/reply.md",
      '$ git commit -qm "Reply on the login bug"',
      "$ git push",
      "$ git pull",
      "$ ls comments/0001",
      `$ cat comments/0001/${id}.md`,
    ],
  );
  // The thread before and after: the seed's two comments, then the new one named by its id.
  t.true(tour.startsWith("\n$ ls comments/0001\n1000000001.md\n1000000002.md\n\n$ printf"), tour);
  t.true(
    tour.includes(
      `\n$ ls comments/0001\n1000000001.md\n1000000002.md\n${id}.md\n\n$ cat comments/0001/${id}.md\n`,
    ),
    tour,
  );
  t.regex(
    tour,
    new RegExp(
      `\\$ cat comments/0001/${id}\\.md\\n---\\nid: ${id}\\nauthor: "demo@localhost"\\n` +
        "created_at: \\S+\\nupdated_at: \\S+\\nversion: 1\\n---\\n" +
        "Confirmed: a password with a colon fails the same way\\.\\n\\nsvc demo: done",
    ),
  );
});

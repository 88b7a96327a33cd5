/**
 * Markdown ⇄ ADF end to end (issue 32 §1, "What it must show"): real git against the fake tracker, which
 * refuses any description Atlassian's ADF schema refuses. Each construct the converter maps is pushed in a
 * new issue file, and after `git pull` the issue's file holds the same construct (the Markdown asserted) and
 * the ADF the tracker stored is valid by the schema. Each construct ADF cannot hold is refused before any
 * write, naming file and line, and the printed command pushes the fixed files as printed. A description
 * spelled otherwise than svc writes it is pushed, the push says which file will read differently, and
 * `git pull` brings svc's spelling without a conflict.
 */
import test, { type ExecutionContext } from "ava";
import { adfSchemaProblem } from "../testing/adf-schema.js";
import { type FakeTracker, givenFakeTracker } from "../testing/fake-tracker.js";
import { type GitEnv, git, gitOk, run } from "../testing/git.js";
import { commitAll, editWorkFile, readWorkFile, writeWorkFile } from "../testing/push.js";
import { givenTrackerEnv, trackerPath, trackerRemote, trackerWrites } from "../testing/tracker.js";

async function givenEmptyClone(t: ExecutionContext): Promise<{ tracker: FakeTracker; env: GitEnv }> {
  const tracker = await givenFakeTracker(t);
  tracker.addIssue("TEST", { summary: "Seed", description: null });
  const env = givenTrackerEnv(t, tracker);
  await gitOk(t, env, ["clone", "-q", trackerRemote(tracker.url, "TEST"), "d"]);
  await gitOk(t, env, ["config", "pull.rebase", "false"], { cwd: "d" });
  return { tracker, env };
}

const issueFile = (title: string, body: string) => `---\ntitle: ${JSON.stringify(title)}\n---\n${body}`;

/** The body of a record file: what follows the frontmatter's closing line. */
function bodyOf(text: string): string {
  return text.slice(text.indexOf("\n---\n", 3) + 5);
}

/** Each construct as written, and as it reads after the round trip (`same`: as written). */
const CONSTRUCTS: readonly { name: string; body: string; back: string | "same" }[] = [
  {
    name: "table",
    body: "| Step | Result |\n|:--|--:|\n| open | **fails** |\n| retry |\n",
    back: "| Step  |    Result |\n| ----- | --------: |\n| open  | **fails** |\n| retry |           |\n",
  },
  { name: "task list", body: "- [ ] write it\n- [x] test it\n  - [ ] twice\n", back: "same" },
  {
    name: "hard break, two spaces",
    body: "first line  \nsecond line\n",
    back: "first line\\\nsecond line\n",
  },
  { name: "hard break, backslash", body: "first line\\\nsecond line\n", back: "same" },
  {
    name: "autolinks",
    body: "See <https://example.com/a> and https://example.org/b.\n",
    back: "See <https://example.com/a> and <https://example.org/b>.\n",
  },
  { name: "headings", body: "# One\n\n### Three\n", back: "same" },
  { name: "nested lists", body: "- a\n  1. b\n  2. c\n- d\n", back: "same" },
  { name: "code block with language", body: "```python\nprint('hi')\n```\n", back: "same" },
  { name: "block quote of paragraphs", body: "> one\n>\n> two\n", back: "same" },
  {
    name: "marks and a link",
    body: "_em_ **strong** ~~strike~~ `code` [link](https://example.com)\n",
    back: "same",
  },
  { name: "rule", body: "above\n\n---\n\nbelow\n", back: "same" },
];

test("each construct pushed in a new issue reads back as the same construct after git pull; the stored ADF is valid", async (t) => {
  const { tracker, env } = await givenEmptyClone(t);
  for (const [index, { name, body }] of CONSTRUCTS.entries())
    writeWorkFile(env, "d", `issues/new-${index}.md`, issueFile(name, body));
  await commitAll(t, env, "d", "One issue per construct");
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
  // The creates go in the order git lists the files (new-0, new-1, new-10, …): the issues are found by title.
  const keyOf = new Map<string, string>();
  for (let n = 2; n < CONSTRUCTS.length + 2; n++)
    keyOf.set(tracker.issue(`TEST-${n}`)?.summary ?? "", `TEST-${n}`);
  for (const { name, body, back } of CONSTRUCTS) {
    const key = keyOf.get(name) ?? "";
    t.is(adfSchemaProblem(tracker.issue(key)?.description), undefined, name);
    t.is(bodyOf(readWorkFile(env, "d", trackerPath(key))), back === "same" ? body : back, name);
  }
  // The table and the task list are ADF's own nodes, not text.
  const stored = (name: string) => JSON.stringify(tracker.issue(keyOf.get(name) ?? "")?.description);
  t.regex(stored("table"), /"type":"table".*"type":"tableHeader"/);
  t.regex(stored("task list"), /"type":"taskList".*"state":"DONE"/);
});

test("what ADF cannot hold is refused before any write, naming file and line; the printed command pushes the fix", async (t) => {
  const { tracker, env } = await givenEmptyClone(t);
  writeWorkFile(env, "d", "issues/html.md", issueFile("HTML", "Intro\n\nSay <b>bold</b>.\n"));
  writeWorkFile(
    env,
    "d",
    "issues/image.md",
    issueFile("Image", "![screenshot](https://example.com/s.png)\n"),
  );
  writeWorkFile(env, "d", "issues/footnote.md", issueFile("Footnote", "Claim[^1]\n\n[^1]: source\n"));
  writeWorkFile(env, "d", "issues/quote.md", issueFile("Quote", "> # Heading in a quote\n"));
  await commitAll(t, env, "d", "Things Jira cannot hold");
  const from = tracker.requests.length;
  const refused = await git(env, ["push"], { cwd: "d" });
  t.is(refused.code, 1, refused.stderr);
  t.regex(refused.stderr, /issues\/html\.md: line 3 of the description has raw HTML "<b>"/);
  t.regex(refused.stderr, /issues\/image\.md: line 1 of the description has an image/);
  t.regex(refused.stderr, /issues\/footnote\.md: line 1 of the description has a footnote reference/);
  t.regex(refused.stderr, /issues\/quote\.md: line 1 of the description has a heading inside a block quote/);
  t.regex(refused.stderr, /counted from the one after the frontmatter's closing ---/);
  t.deepEqual(trackerWrites(tracker, from), []);

  const commands = refused.stderr.split("\n").filter((line) => /^ {2}git /.test(line));
  t.is(commands.length, 1, refused.stderr);
  editWorkFile(env, "d", "issues/html.md", (text) => text.replace("<b>bold</b>", "**bold**"));
  editWorkFile(env, "d", "issues/image.md", (text) => text.replace("![screenshot]", "[screenshot]"));
  editWorkFile(env, "d", "issues/footnote.md", (text) =>
    text.replace("Claim[^1]\n\n[^1]: source", "Claim (source)"),
  );
  editWorkFile(env, "d", "issues/quote.md", (text) => text.replace("> # Heading", "> Heading"));
  const ran = await run(env, "sh", ["-c", commands[0]?.trim() ?? ""], {
    cwd: "d",
    env: { GIT_EDITOR: "false" },
  });
  t.is(ran.code, 0, ran.stderr);
  t.regex(ran.stderr, /4 created/);
  for (const key of ["TEST-2", "TEST-3", "TEST-4", "TEST-5"])
    t.is(adfSchemaProblem(tracker.issue(key)?.description), undefined, key);
  t.true(
    [2, 3, 4, 5].some((n) =>
      /"text":"bold","marks":\[\{"type":"strong"\}\]/.test(
        JSON.stringify(tracker.issue(`TEST-${n}`)?.description),
      ),
    ),
  );
});

test("a description spelled otherwise: the push names the file that reads differently, git pull brings svc's spelling cleanly", async (t) => {
  const { tracker, env } = await givenEmptyClone(t);
  editWorkFile(env, "d", trackerPath("TEST-1"), (text) => `${text}Some *em* here\n\n+ one\n+ two\n`);
  await commitAll(t, env, "d", "Describe it");
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.regex(
    push.stderr,
    /svc: issues\/TEST-1\.md: the tracker keeps what you wrote and gives it back in its own Markdown spelling, so after git pull the file reads differently with the same meaning \(line 1 of the body, "Some \*em\* here", reads "Some _em_ here"\)/,
  );
  t.regex(
    push.stderr,
    /nothing was lost and there is nothing to fix: git pull --ff-only brings that spelling/,
  );
  t.regex(JSON.stringify(tracker.issue("TEST-1")?.description), /"text":"em","marks":\[\{"type":"em"\}\]/);
  const pulled = await git(env, ["pull", "--ff-only"], { cwd: "d" });
  t.is(pulled.code, 0, pulled.stderr);
  t.is(bodyOf(readWorkFile(env, "d", trackerPath("TEST-1"))), "Some _em_ here\n\n- one\n- two\n");
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");

  // An edit written in svc's spelling: pushed without a note.
  editWorkFile(env, "d", trackerPath("TEST-1"), (text) => text.replace("- two", "- two\n- three"));
  await commitAll(t, env, "d", "One more");
  const again = await git(env, ["push"], { cwd: "d" });
  t.is(again.code, 0, again.stderr);
  t.notRegex(again.stderr, /reads differently/);
});

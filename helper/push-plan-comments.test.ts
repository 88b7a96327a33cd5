/**
 * The comment planner's rules (helper/push-plan-comments.ts), table-driven: which changed comment files
 * become which writes, and which are refused before any write (naming the file, with the command that
 * clears it). Blob contents, the server's records and the create journal are plain maps; nothing touches git.
 */
import test from "ava";
import type { BaseToken } from "../backends/backend.js";
import { commentSchema } from "../backends/comment.js";
import { type RecordFields, renderRecordFile } from "../backends/record.js";
import { SIM_SCHEMA } from "../backends/sim/schema.js";
import { type DiffEntry, type JournalMatch, nextCommand, type Plan } from "./push-plan.js";
import { planComments } from "./push-plan-comments.js";

const ZERO = "0".repeat(40);
const BASE_COMMIT = "b".repeat(40);
const SCHEMA = commentSchema(SIM_SCHEMA, true);
const ME = { id: "me@example.com", author: "me@example.com" };

function oid(name: string): string {
  return Buffer.from(name).toString("hex").padEnd(40, "0").slice(0, 40);
}

function comment(id: number, author: string, body: string, version = 1): string {
  const fields: RecordFields = {
    id: String(id),
    author,
    created_at: "2026-11-28T09:00:00.000Z",
    updated_at: `2026-11-28T09:0${version}:00.000Z`,
    version,
  };
  return renderRecordFile(SCHEMA, { fields, body });
}

const BLOBS: Readonly<Record<string, string>> = {
  mine: comment(1000000001, ME.author, "On it.\n"),
  "mine-edited": comment(1000000001, ME.author, "On it; in review.\n"),
  "mine-id-edited": comment(1000000001, ME.author, "On it.\n").replace("version: 1", "version: 9"),
  theirs: comment(1000000002, "alice@example.com", "I can reproduce it.\n", 2),
  "theirs-edited": comment(1000000002, "alice@example.com", "I cannot reproduce it.\n", 2),
  plain: "LGTM\n",
  empty: "\n",
  "with-id": comment(1000000003, ME.author, "Copied.\n"),
  record: "---\ntitle: New\n---\n",
};

function added(path: string, blob: string): DiffEntry {
  return { status: "A", path, oldMode: "000000", newMode: "100644", oldOid: ZERO, newOid: oid(blob) };
}
function modified(path: string, before: string, after: string): DiffEntry {
  return { status: "M", path, oldMode: "100644", newMode: "100644", oldOid: oid(before), newOid: oid(after) };
}
function deleted(path: string, before: string): DiffEntry {
  return { status: "D", path, oldMode: "100644", newMode: "000000", oldOid: oid(before), newOid: ZERO };
}

function plan(entries: DiffEntry[], journal: Readonly<Record<string, JournalMatch>> = {}): Plan {
  const byOid = new Map(Object.entries(BLOBS).map(([name, text]) => [oid(name), Buffer.from(text)]));
  const tokens: Record<string, BaseToken> = {
    "comment:1000000005": { version: 1, updatedAt: "2026-11-28T10:00:00.000Z" },
  };
  return planComments({
    schema: SCHEMA,
    entries: entries.filter((entry) => entry.path.startsWith("comments/")),
    allEntries: entries,
    read: (id) => byOid.get(id) ?? Buffer.alloc(0),
    baseToken: (key) => tokens[key],
    journal: (path) => journal[path],
    maxBodyBytes: 1024,
    recordFolder: "issues",
    recordAt: (path) => ({ "issues/0042.md": "42", "issues/0007.md": "7" })[path],
    me: ME,
    restoreFrom: BASE_COMMIT,
  });
}

const TOKEN_1 = { version: 1, updatedAt: "2026-11-28T09:01:00.000Z" };

const CASES: readonly {
  readonly name: string;
  readonly entries: DiffEntry[];
  readonly journal?: Readonly<Record<string, JournalMatch>>;
  readonly writes: unknown[];
  readonly problems?: string[];
  readonly ignored?: unknown[];
}[] = [
  {
    name: "a new file without id is a comment on the record of its folder",
    entries: [added("comments/0042/new.md", "plain")],
    writes: [
      {
        kind: "create",
        path: "comments/0042/new.md",
        oid: oid("plain"),
        changes: { fields: { parent: "42" }, body: "LGTM\n" },
      },
    ],
  },
  {
    name: "an edited body of your own comment is an update based on the version your file has",
    entries: [modified("comments/0042/1000000001.md", "mine", "mine-edited")],
    writes: [
      {
        kind: "update",
        key: "comment:1000000001",
        path: "comments/0042/1000000001.md",
        base: TOKEN_1,
        changes: { fields: {}, body: "On it; in review.\n" },
        desired: { fields: {}, body: "On it; in review.\n" },
        original: { fields: parsedFields("mine"), body: "On it.\n" },
      },
    ],
  },
  {
    name: "an edit of your own comment's version alone is ignored and reported",
    entries: [modified("comments/0042/1000000001.md", "mine", "mine-id-edited")],
    writes: [],
    ignored: [{ path: "comments/0042/1000000001.md", fields: ["version"] }],
  },
  {
    name: "git rm of your own comment is a delete",
    entries: [deleted("comments/0042/1000000001.md", "mine")],
    writes: [
      { kind: "delete", key: "comment:1000000001", path: "comments/0042/1000000001.md", base: TOKEN_1 },
    ],
  },
  {
    name: "someone else's comment edited is refused, naming the author",
    entries: [modified("comments/0042/1000000002.md", "theirs", "theirs-edited")],
    writes: [],
    problems: [
      "comments/0042/1000000002.md: this is alice@example.com's comment, edited here; svc never rewrites or deletes anyone else's comment (you are me@example.com). Restore the file",
    ],
  },
  {
    name: "someone else's comment deleted is refused",
    entries: [deleted("comments/0042/1000000002.md", "theirs")],
    writes: [],
    problems: [
      "comments/0042/1000000002.md: this is alice@example.com's comment, deleted here; svc never rewrites or deletes anyone else's comment (you are me@example.com). Restore the file",
    ],
  },
  {
    name: "a comment on a record the same push creates is refused: push the record first",
    entries: [added("issues/new.md", "record"), added("comments/new/first.md", "plain")],
    writes: [],
    problems: [
      "comments/new/first.md: issues/new.md is a record this push creates; svc posts a comment only on a record the server has. Push the record first: take the comment out of this commit (the command below; the file stays on disk), push; after git pull the record is issues/<id>.md, then move the comment to comments/<id>/ and git add, commit and push it",
    ],
  },
  {
    name: "a comment in a folder no record has is refused",
    entries: [added("comments/0099/new.md", "plain")],
    writes: [],
    problems: [
      "comments/0099/new.md: there is no record issues/0099.md on the server for this comment; a comment goes in the folder named after its record's file (comments/0042/ for issues/0042.md)",
    ],
  },
  {
    name: "an empty new comment is refused before any write",
    entries: [added("comments/0042/new.md", "empty")],
    writes: [],
    problems: ["comments/0042/new.md: the comment is empty; write its text below the `---` line"],
  },
  {
    name: "a new file with an id is refused: comments cannot be copied or moved",
    entries: [added("comments/0007/copy.md", "with-id")],
    writes: [],
    problems: [
      "comments/0007/copy.md: a new comment file carries id 1000000003; comments cannot be copied or moved. Remove the `id:` line (and the other fields) to post it as a new comment",
    ],
  },
  {
    name: "anything else under comments/ is refused",
    entries: [added("comments/notes.md", "plain"), added("comments/0042/a/b.md", "plain")],
    writes: [],
    problems: [
      "comments/notes.md: svc pushes nothing else there: a comment is comments/<record file name without .md>/<name>.md",
      "comments/0042/a/b.md: svc pushes nothing else there: a comment is comments/<record file name without .md>/<name>.md",
    ],
  },
  {
    name: "a new file an earlier, cut-off push already posted is that comment: unchanged, nothing to write",
    entries: [added("comments/0042/new.md", "plain")],
    journal: {
      "comments/0042/new.md": {
        key: "comment:1000000005",
        created: {
          original: { fields: { parent: "42" }, body: "LGTM\n" },
          token: { version: 1, updatedAt: "x" },
        },
      },
    },
    writes: [],
  },
];

function parsedFields(blob: string): RecordFields {
  const fields: Record<string, string | number> = {};
  for (const line of (BLOBS[blob] ?? "").split("---\n")[1]?.split("\n") ?? []) {
    const [name, ...rest] = line.split(": ");
    if (!name) continue;
    const value = rest.join(": ").replace(/^"(.*)"$/, "$1");
    fields[name] = name === "version" ? Number(value) : value;
  }
  return fields;
}

for (const one of CASES) {
  test(`comment plan: ${one.name}`, (t) => {
    const result = plan(one.entries, one.journal);
    t.deepEqual(result.writes, one.writes);
    t.deepEqual(
      result.problems.map((problem) => `${problem.path}: ${problem.message}`),
      one.problems ?? [],
    );
    t.deepEqual(result.ignoredEdits, one.ignored ?? []);
  });
}

test("the command for someone else's comment restores it from the push's base, then pushes", (t) => {
  const result = plan([
    modified("comments/0042/1000000002.md", "theirs", "theirs-edited"),
    deleted("comments/0007/1000000002.md", "theirs"),
  ]);
  t.is(
    nextCommand(result.problems, "")?.command,
    `git checkout ${BASE_COMMIT} -- comments/0042/1000000002.md comments/0007/1000000002.md && git commit -m "Fix what svc refused to push" && git push`,
  );
  t.is(
    nextCommand(result.problems.slice(0, 1), "sub/")?.command,
    `git checkout ${BASE_COMMIT} -- ../comments/0042/1000000002.md && git commit -m "Restore comments/0042/1000000002.md" && git push`,
  );
});

/**
 * The push planner's rules (DESIGN.md §4 "Push"), table-driven: which changed files become which REST
 * writes, which are refused (naming the file), and which edits of server-controlled fields are ignored and
 * reported. Blob contents, base tokens and the create journal are plain maps; nothing touches git.
 */
import test from "ava";
import fc from "fast-check";
import type { BaseToken } from "../backends/backend.js";
import { type RecordFields, renderRecordFile } from "../backends/record.js";
import { recordChanges as changesBetween, sameBody } from "../backends/record-diff.js";
import { SIM_SCHEMA } from "../backends/sim/schema.js";
import { fuzzParams } from "../testing/fuzz.js";
import {
  type DiffEntry,
  type JournalMatch,
  nextCommand,
  type Plan,
  type PlannedWrite,
  type PlanProblem,
  planPush,
  problemSummary,
} from "./push-plan.js";

const ZERO = "0".repeat(40);
const MAX_BODY_BYTES = 4096;

/** Fake blob ids: 40 hex digits, distinct per name. */
function oid(name: string): string {
  return Buffer.from(name).toString("hex").padEnd(40, "0").slice(0, 40);
}

const ISSUE_42 = {
  id: 42,
  title: "Fix login",
  status: "open",
  labels: ["bug"],
  created_at: "2026-01-01T00:00:42.000Z",
  updated_at: "2026-01-02T00:00:00.000Z",
  version: 3,
} as const satisfies RecordFields;

const ISSUE_7 = {
  ...ISSUE_42,
  id: 7,
  title: "Seven",
  version: 1,
  updated_at: "2026-01-01T00:00:07.000Z",
} as const satisfies RecordFields;

/** A create of `issues/new-bug.md` that became record 77, whose push was cut off after the POST. */
const OPEN_77: JournalMatch = {
  key: "77",
  created: {
    original: { fields: { title: "New bug" }, body: "" },
    token: { version: 1, updatedAt: "2026-01-03T00:00:00.000Z" },
  },
};

const TOKENS: Readonly<Record<string, BaseToken>> = {
  "42": { version: 3, updatedAt: "2026-01-02T00:00:00.000Z" },
  "7": { version: 1, updatedAt: "2026-01-01T00:00:07.000Z" },
  "77": { version: 1, updatedAt: "2026-01-03T00:00:00.000Z" },
};

function file(fields: RecordFields, body = "Body.\n"): string {
  return renderRecordFile(SIM_SCHEMA, { fields, body });
}

const BASE_42 = file(ISSUE_42, "The login button does nothing.\n");

type Blobs = Readonly<Record<string, string | Buffer>>;

/** A diff entry with contents named by key of `blobs` (the oid is derived from the name). */
function added(path: string, blob: string, mode = "100644"): DiffEntry {
  return { status: "A", path, oldMode: "000000", newMode: mode, oldOid: ZERO, newOid: oid(blob) };
}
function modified(path: string, before: string, after: string, newMode = "100644"): DiffEntry {
  return { status: "M", path, oldMode: "100644", newMode, oldOid: oid(before), newOid: oid(after) };
}
function deleted(path: string, before: string): DiffEntry {
  return { status: "D", path, oldMode: "100644", newMode: "000000", oldOid: oid(before), newOid: ZERO };
}

interface PlanCase {
  readonly name: string;
  readonly entries: readonly DiffEntry[];
  readonly blobs: Blobs;
  /** `path|blob name` → key of a settled create (its push finished). */
  readonly journal?: Readonly<Record<string, string>>;
  /** path → an open create (its push was cut off after the POST). */
  readonly open?: Readonly<Record<string, JournalMatch>>;
  readonly writes?: readonly unknown[];
  /** Problems by path, each message matched by a pattern. */
  readonly problems?: readonly (readonly [string, RegExp])[];
  readonly ignoredEdits?: Plan["ignoredEdits"];
}

function plan(
  entries: readonly DiffEntry[],
  blobs: Blobs,
  journal: Record<string, string> = {},
  open: Readonly<Record<string, JournalMatch>> = {},
): Plan {
  const byOid = new Map(Object.entries(blobs).map(([name, content]) => [oid(name), Buffer.from(content)]));
  const journalByOid = new Map(
    Object.entries(journal).map(([at, key]) => {
      const [path = "", name = ""] = at.split("|");
      return [`${path}|${oid(name)}`, key];
    }),
  );
  return planPush({
    schema: SIM_SCHEMA,
    entries,
    read: (id) => {
      const content = byOid.get(id);
      if (!content) throw new Error(`the planner read blob ${id}, which the test did not provide`);
      return content;
    },
    baseToken: (key) => TOKENS[key],
    journal: (path, baseOid) => {
      const found = open[path];
      if (found) return found;
      const key = baseOid === undefined ? undefined : journalByOid.get(`${path}|${baseOid}`);
      return key === undefined ? undefined : { key };
    },
    maxBodyBytes: MAX_BODY_BYTES,
  });
}

/** The members of a write a test states (the merge inputs `desired`/`original` are checked separately). */
function summary(write: PlannedWrite): unknown {
  if (write.kind === "create") return { kind: write.kind, path: write.path, changes: write.changes };
  if (write.kind === "update")
    return { kind: write.kind, key: write.key, path: write.path, base: write.base, changes: write.changes };
  return { kind: write.kind, key: write.key, path: write.path, base: write.base };
}

const CASES: readonly PlanCase[] = [
  {
    name: "a new file without an id is a create with its writable fields and body",
    entries: [added("issues/new-bug.md", "new")],
    blobs: { new: file({ title: "New bug", status: "open", labels: ["p1"] }, "It breaks.\n") },
    writes: [
      {
        kind: "create",
        path: "issues/new-bug.md",
        changes: { fields: { title: "New bug", status: "open", labels: ["p1"] }, body: "It breaks.\n" },
      },
    ],
  },
  {
    name: "a new file whose create was cut off after the POST, unchanged since, writes nothing",
    entries: [added("issues/new-bug.md", "new")],
    blobs: { new: file({ title: "New bug" }, "") },
    open: { "issues/new-bug.md": OPEN_77 },
    writes: [],
    problems: [],
  },
  {
    name: "the journal knows the file by its path: edited after a cut-off create, it is an update of that record",
    entries: [added("issues/new-bug.md", "edited")],
    blobs: { edited: file({ title: "New bug, edited" }, "") },
    open: { "issues/new-bug.md": OPEN_77 },
    writes: [
      {
        kind: "update",
        key: "77",
        path: "issues/new-bug.md",
        base: OPEN_77.created?.token,
        changes: { fields: { title: "New bug, edited" } },
      },
    ],
  },
  {
    name: "a settled create does not claim a new file at its path: that is a new record",
    entries: [added("issues/new-bug.md", "new")],
    blobs: { new: file({ title: "New bug" }, "") },
    journal: { "issues/new-bug.md|new": "77" },
    writes: [
      { kind: "create", path: "issues/new-bug.md", changes: { fields: { title: "New bug" }, body: "" } },
    ],
  },
  {
    name: "a cut-off create's file and the record's own file both edited: refused, one record, one file",
    entries: [modified("issues/0077.md", "r77", "r77-edited"), added("issues/new-bug.md", "edited")],
    blobs: {
      edited: file({ title: "New bug, edited" }, ""),
      r77: file({ ...ISSUE_42, id: 77, title: "New bug" }, ""),
      "r77-edited": file({ ...ISSUE_42, id: 77, title: "New bug", status: "done" }, ""),
    },
    open: { "issues/new-bug.md": OPEN_77 },
    problems: [
      [
        "issues/new-bug.md",
        /issues\/0077\.md and this file are both record 77; keep your edits in one and remove issues\/new-bug\.md$/,
      ],
    ],
  },
  {
    name: "a title over the backend's limit is refused before any write, naming field and limit",
    entries: [added("issues/long.md", "long"), modified("issues/0042.md", "base", "mine")],
    blobs: {
      long: file({ title: "t".repeat(2000) }, ""),
      base: BASE_42,
      mine: file({ ...ISSUE_42, status: "done" }, "The login button does nothing.\n"),
    },
    problems: [["issues/long.md", /field `title` is 2,000 characters; sim accepts at most 1,000/]],
  },
  {
    name: "labels over the count and length limits, an empty label and a blank title are refused",
    entries: [
      modified("issues/0042.md", "base", "many"),
      added("issues/a.md", "a"),
      added("issues/b.md", "b"),
    ],
    blobs: {
      base: BASE_42,
      many: file(
        { ...ISSUE_42, labels: Array.from({ length: 101 }, (_, i) => `l${i}`) },
        "The login button does nothing.\n",
      ),
      a: file({ title: "A", labels: ["x".repeat(201), ""] }, ""),
      b: file({ title: "   " }, ""),
    },
    problems: [
      ["issues/0042.md", /field `labels` has 101 entries; sim accepts at most 100/],
      ["issues/a.md", /field `labels` has an entry of 201 characters; sim accepts at most 200/],
      ["issues/b.md", /field `title` is empty/],
    ],
  },
  {
    name: "a record the server holds over a limit can still be edited in another field",
    entries: [modified("issues/0042.md", "huge", "huge-done")],
    blobs: {
      huge: file({ ...ISSUE_42, labels: Array.from({ length: 5000 }, (_, i) => `l${i}`) }, ""),
      "huge-done": file(
        { ...ISSUE_42, status: "done", labels: Array.from({ length: 5000 }, (_, i) => `l${i}`) },
        "",
      ),
    },
    writes: [
      {
        kind: "update",
        key: "42",
        path: "issues/0042.md",
        base: TOKENS["42"],
        changes: { fields: { status: "done" } },
      },
    ],
    problems: [],
  },
  {
    name: "a body over the backend's limit is refused",
    entries: [added("issues/big.md", "big")],
    blobs: { big: file({ title: "Big" }, "x".repeat(MAX_BODY_BYTES + 1)) },
    problems: [["issues/big.md", /the body is 4,097 bytes; sim accepts at most 4,096 bytes/]],
  },
  {
    name: "a path with a `..` part (a crafted tree) is refused, naming it",
    entries: [added("issues/../../x.md", "new")],
    blobs: { new: file({ title: "New bug" }, "") },
    problems: [["issues/../../x.md", /not a file inside the repository/]],
  },
  {
    name: "server-controlled fields in a new file are not sent",
    entries: [added("issues/new-bug.md", "new")],
    blobs: { new: file({ title: "New", version: 5, created_at: "2020-01-01T00:00:00Z" }, "x\n") },
    writes: [
      {
        kind: "create",
        path: "issues/new-bug.md",
        changes: { fields: { title: "New" }, body: "x\n" },
      },
    ],
  },
  {
    name: "a changed status is an update carrying only status, conditional on the base token",
    entries: [modified("issues/0042.md", "base", "mine")],
    blobs: { base: BASE_42, mine: file({ ...ISSUE_42, status: "done" }, "The login button does nothing.\n") },
    writes: [
      {
        kind: "update",
        key: "42",
        path: "issues/0042.md",
        base: TOKENS["42"],
        changes: { fields: { status: "done" } },
      },
    ],
  },
  {
    name: "a changed body and labels are sent, unchanged title and status are not",
    entries: [modified("issues/0042.md", "base", "mine")],
    blobs: { base: BASE_42, mine: file({ ...ISSUE_42, labels: ["bug", "ui"] }, "New text.\n") },
    writes: [
      {
        kind: "update",
        key: "42",
        path: "issues/0042.md",
        base: TOKENS["42"],
        changes: { fields: { labels: ["bug", "ui"] }, body: "New text.\n" },
      },
    ],
  },
  {
    name: "reordered labels are a change (the server keeps their order)",
    entries: [modified("issues/0042.md", "base", "mine")],
    blobs: {
      base: file({ ...ISSUE_42, labels: ["a", "b"] }),
      mine: file({ ...ISSUE_42, labels: ["b", "a"] }),
    },
    writes: [
      {
        kind: "update",
        key: "42",
        path: "issues/0042.md",
        base: TOKENS["42"],
        changes: { fields: { labels: ["b", "a"] } },
      },
    ],
  },
  {
    name: "adding an assignee sends it; removing the line clears it (null)",
    entries: [modified("issues/0042.md", "base", "mine"), modified("issues/0007.md", "base7", "mine7")],
    blobs: {
      base: BASE_42,
      mine: file({ ...ISSUE_42, assignee: "dana" }, "The login button does nothing.\n"),
      base7: file({ ...ISSUE_7, assignee: "lee" }),
      mine7: file(ISSUE_7),
    },
    writes: [
      {
        kind: "update",
        key: "42",
        path: "issues/0042.md",
        base: TOKENS["42"],
        changes: { fields: { assignee: "dana" } },
      },
      {
        kind: "update",
        key: "7",
        path: "issues/0007.md",
        base: TOKENS["7"],
        changes: { fields: { assignee: null } },
      },
    ],
  },
  {
    name: "edited version and id are ignored and reported; the other changed fields are still sent",
    entries: [modified("issues/0042.md", "base", "mine")],
    blobs: {
      base: BASE_42,
      mine: file(
        { ...ISSUE_42, id: 1, version: 999, title: "Fix login now" },
        "The login button does nothing.\n",
      ),
    },
    writes: [
      {
        kind: "update",
        key: "42",
        path: "issues/0042.md",
        base: TOKENS["42"],
        changes: { fields: { title: "Fix login now" } },
      },
    ],
    ignoredEdits: [{ path: "issues/0042.md", fields: ["id", "version"] }],
  },
  {
    name: "an edit of only server-controlled fields writes nothing but is reported",
    entries: [modified("issues/0042.md", "base", "mine")],
    blobs: {
      base: BASE_42,
      mine: file({ ...ISSUE_42, updated_at: "2030-01-01T00:00:00.000Z" }, "The login button does nothing.\n"),
    },
    writes: [],
    ignoredEdits: [{ path: "issues/0042.md", fields: ["updated_at"] }],
  },
  {
    name: "removing server-controlled lines is neither a change nor an edit",
    entries: [modified("issues/0042.md", "base", "mine")],
    blobs: {
      base: BASE_42,
      mine: file(
        { title: ISSUE_42.title, status: "open", labels: ["bug"] },
        "The login button does nothing.\n",
      ),
    },
    writes: [],
    ignoredEdits: [],
  },
  {
    name: "a body that only gained a final newline is no change",
    entries: [modified("issues/0042.md", "base", "mine"), modified("issues/0007.md", "base7", "mine7")],
    blobs: {
      base: BASE_42,
      mine: file(ISSUE_42, "The login button does nothing.\n\n"),
      base7: file(ISSUE_7, "no newline"),
      mine7: file(ISSUE_7, "no newline\n"),
    },
    writes: [],
  },
  {
    name: "a body that lost its final newline is no change",
    entries: [modified("issues/0042.md", "base", "mine")],
    blobs: { base: BASE_42, mine: file(ISSUE_42, "The login button does nothing.") },
    writes: [],
  },
  {
    name: "an executable bit on a record file is no change",
    entries: [modified("issues/0042.md", "base", "base", "100755")],
    blobs: { base: BASE_42 },
    writes: [],
  },
  {
    name: "git rm of a record file is a delete conditional on the base token",
    entries: [deleted("issues/0042.md", "base")],
    blobs: { base: BASE_42 },
    writes: [{ kind: "delete", key: "42", path: "issues/0042.md", base: TOKENS["42"] }],
  },
  {
    name: "a deleted file without id that the journal created deletes that record",
    entries: [deleted("issues/new-bug.md", "new")],
    blobs: { new: file({ title: "New bug" }, "") },
    journal: { "issues/new-bug.md|new": "77" },
    writes: [{ kind: "delete", key: "77", path: "issues/new-bug.md", base: TOKENS["77"] }],
  },
  {
    name: "a deleted file without id the server never saw writes nothing",
    entries: [deleted("issues/new-bug.md", "new")],
    blobs: { new: file({ title: "New bug" }, "") },
    writes: [],
    problems: [],
  },
  {
    name: "a renamed file is an update of its record, not a delete and a create",
    entries: [deleted("issues/0042.md", "base"), added("issues/login.md", "mine")],
    blobs: {
      base: BASE_42,
      mine: file({ ...ISSUE_42, status: "in_progress" }, "The login button does nothing.\n"),
    },
    writes: [
      {
        kind: "update",
        key: "42",
        path: "issues/login.md",
        base: TOKENS["42"],
        changes: { fields: { status: "in_progress" } },
      },
    ],
  },
  {
    name: "a rename without a change writes nothing",
    entries: [deleted("issues/0042.md", "base"), added("issues/login.md", "base")],
    blobs: { base: BASE_42 },
    writes: [],
    problems: [],
  },
  {
    name: "a modified file that was a create in the base (no id, journal knows it) is an update of that record",
    entries: [modified("issues/new-bug.md", "new", "edited")],
    blobs: { new: file({ title: "New bug" }, ""), edited: file({ title: "New bug", status: "done" }, "") },
    journal: { "issues/new-bug.md|new": "77" },
    writes: [
      {
        kind: "update",
        key: "77",
        path: "issues/new-bug.md",
        base: TOKENS["77"],
        changes: { fields: { status: "done" } },
      },
    ],
  },
  {
    name: "a modified file without id that never reached the server is still a create",
    entries: [modified("issues/new-bug.md", "new", "edited")],
    blobs: { new: file({ title: "New bug" }, ""), edited: file({ title: "New bug", status: "done" }, "") },
    writes: [
      {
        kind: "create",
        path: "issues/new-bug.md",
        changes: { fields: { title: "New bug", status: "done" }, body: "" },
      },
    ],
  },
  {
    name: "a copy of a record file under a new name is refused as a duplicate id",
    entries: [added("issues/copy.md", "base")],
    blobs: { base: BASE_42 },
    writes: [],
    problems: [["issues/copy.md", /two files have id 42; a new record must not carry an id/]],
  },
  {
    name: "two renamed copies of one record: the second is a duplicate",
    entries: [deleted("issues/0042.md", "base"), added("issues/a.md", "mine"), added("issues/b.md", "mine")],
    blobs: {
      base: BASE_42,
      mine: file({ ...ISSUE_42, title: "Changed" }, "The login button does nothing.\n"),
    },
    writes: [
      {
        kind: "update",
        key: "42",
        path: "issues/a.md",
        base: TOKENS["42"],
        changes: { fields: { title: "Changed" } },
      },
    ],
    problems: [["issues/b.md", /two files have id 42: issues\/a\.md and this one/]],
  },
  {
    name: "a new file with the id of a record the server does not have is refused",
    entries: [added("issues/9999.md", "ghost")],
    blobs: { ghost: file({ ...ISSUE_42, id: 9999 }) },
    writes: [],
    problems: [["issues/9999.md", /id 9999 is not a record on the server; remove the `id:` line/]],
  },
  {
    name: "a changed or deleted record the base does not have is refused",
    entries: [modified("issues/0500.md", "a", "b"), deleted("issues/0501.md", "c")],
    blobs: {
      a: file({ ...ISSUE_42, id: 500 }),
      b: file({ ...ISSUE_42, id: 500, title: "x" }),
      c: file({ ...ISSUE_42, id: 501 }),
    },
    writes: [],
    problems: [
      ["issues/0500.md", /record 500 is not in the server state this push is based on/],
      ["issues/0501.md", /record 501 is not in the server state this push is based on/],
    ],
  },
  {
    name: "files outside issues/, not ending in .md, or in a subfolder are refused",
    entries: [
      added("notes.txt", "text"),
      added("issues/readme.txt", "text"),
      added("issues/sub/0001.md", "new"),
      added("README.md", "new"),
    ],
    blobs: { text: "hello\n", new: file({ title: "x" }) },
    writes: [],
    problems: [
      ["notes.txt", /^only issues\/<name>\.md files are records, and svc pushes nothing else$/],
      ["issues/readme.txt", /only issues\/<name>\.md files are records/],
      ["issues/sub/0001.md", /only issues\/<name>\.md files are records/],
      ["README.md", /only issues\/<name>\.md files are records/],
    ],
  },
  {
    name: "deleting a file that is no record needs no write: the server never had it",
    entries: [deleted("notes.txt", "text"), deleted("issues/readme.txt", "text")],
    blobs: { text: "hello\n" },
    writes: [],
    problems: [],
  },
  {
    name: "a symbolic link (mode 120000) or a file turned into one is refused",
    entries: [
      added("issues/link.md", "target", "120000"),
      { ...modified("issues/0042.md", "base", "target", "120000"), status: "T" },
    ],
    blobs: { target: "0007.md", base: BASE_42 },
    writes: [],
    problems: [
      ["issues/link.md", /a record must be a regular file \(not a link or a submodule\)/],
      ["issues/0042.md", /a record must be a regular file/],
    ],
  },
  {
    name: "a submodule (mode 160000) is refused",
    entries: [added("issues/sub.md", "target", "160000")],
    blobs: { target: "x" },
    writes: [],
    problems: [["issues/sub.md", /a record must be a regular file/]],
  },
  {
    name: "invalid YAML is refused with the YAML error, naming the file",
    entries: [modified("issues/0042.md", "base", "broken")],
    blobs: { base: BASE_42, broken: BASE_42.replace('title: "Fix login"', "title: [unclosed") },
    writes: [],
    problems: [
      [
        "issues/0042.md",
        /^the frontmatter is not valid YAML at line 3\n {2}expected: `key: value` lines\n {2}received: "title: \[unclosed": a `\[`, `\{` or quote opened on this line is not closed on it$/,
      ],
    ],
  },
  {
    name: "a file without a frontmatter block, an unknown field or a bad status is refused",
    entries: [added("issues/a.md", "nofm"), added("issues/b.md", "unknown"), added("issues/c.md", "status")],
    blobs: {
      nofm: "just text\n",
      unknown: "---\ntitle: x\npriority: high\n---\n",
      status: "---\ntitle: x\nstatus: closed\n---\n",
    },
    writes: [],
    problems: [
      ["issues/a.md", /does not start with a frontmatter block/],
      ["issues/b.md", /unknown field `"priority"`/],
      ["issues/c.md", /field `status` has a value this backend does not know/],
    ],
  },
  {
    name: "conflict markers a merge left are refused as such (not as a YAML error), with their line",
    entries: [modified("issues/0042.md", "base", "conflicted"), added("issues/new.md", "conflicted")],
    blobs: {
      base: BASE_42,
      conflicted: BASE_42.replace(
        "status: open\n",
        "<<<<<<< HEAD\nstatus: done\n=======\nstatus: wont_fix\n>>>>>>> 0123abc\n",
      ),
    },
    writes: [],
    problems: [
      ["issues/new.md", /^unresolved conflict markers \(<<<<<<<\) at line 4\n/],
      [
        "issues/0042.md",
        /^unresolved conflict markers \(<<<<<<<\) at line 4\n {2}expected: one version of each/,
      ],
    ],
  },
  {
    name: "conflict markers the server's record has already are its content: an edit beside them is an update",
    entries: [modified("issues/0042.md", "base", "mine")],
    blobs: {
      base: file(ISSUE_42, "<<<<<<< a\nx\n=======\ny\n>>>>>>> b\n"),
      mine: file({ ...ISSUE_42, status: "done" }, "<<<<<<< a\nx\n=======\ny\n>>>>>>> b\n"),
    },
    writes: [
      {
        kind: "update",
        key: "42",
        path: "issues/0042.md",
        base: TOKENS["42"],
        changes: { fields: { status: "done" } },
      },
    ],
  },
  {
    name: "a file that is not UTF-8 is refused",
    entries: [added("issues/latin1.md", "latin1")],
    blobs: { latin1: Buffer.from("---\ntitle: caf\xe9\n---\n", "latin1") },
    writes: [],
    problems: [["issues/latin1.md", /not valid UTF-8/]],
  },
  {
    name: "problems do not hide the writes planned beside them (the caller refuses the whole push)",
    entries: [modified("issues/0042.md", "base", "mine"), added("notes.txt", "text")],
    blobs: {
      base: BASE_42,
      mine: file({ ...ISSUE_42, status: "done" }, "The login button does nothing.\n"),
      text: "",
    },
    writes: [
      {
        kind: "update",
        key: "42",
        path: "issues/0042.md",
        base: TOKENS["42"],
        changes: { fields: { status: "done" } },
      },
    ],
    problems: [["notes.txt", /only issues\/<name>\.md files are records/]],
  },
];

for (const c of CASES) {
  test(`planPush: ${c.name}`, (t) => {
    const result = plan(c.entries, c.blobs, { ...c.journal }, c.open);
    if (c.writes) t.deepEqual(result.writes.map(summary), c.writes);
    const problems = c.problems ?? [];
    t.deepEqual(
      result.problems.map((problem) => problem.path),
      problems.map(([path]) => path),
      JSON.stringify(result.problems),
    );
    for (const [i, [, pattern]] of problems.entries()) t.regex(result.problems[i]?.message ?? "", pattern);
    t.deepEqual(result.ignoredEdits, c.ignoredEdits ?? []);
  });
}

test("planPush: an update carries the base content and the content the user wants, for merges and replays", (t) => {
  const result = plan([modified("issues/0042.md", "base", "mine")], {
    base: BASE_42,
    mine: file({ ...ISSUE_42, version: 999, status: "done" }, "Edited.\n"),
  });
  const [write] = result.writes;
  if (write?.kind !== "update") return t.fail(JSON.stringify(result));
  t.deepEqual(write.original, { fields: ISSUE_42, body: "The login button does nothing.\n" });
  t.deepEqual(write.desired, {
    fields: { title: "Fix login", status: "done", labels: ["bug"] },
    body: "Edited.\n",
  });
});

test("planPush: a blob the planner cannot read is an error of the caller, not a problem of the user", (t) => {
  t.throws(() => plan([modified("issues/0042.md", "base", "mine")], { base: BASE_42 }), {
    message: /did not provide/,
  });
});

// ---------------------------------------------------------------------------------------------------------

const BODY_CASES: readonly (readonly [string, string, boolean])[] = [
  ["a\n", "a\n", true],
  ["a\n", "a", true],
  ["a", "a\n", true],
  ["a\n", "a\n\n", true],
  ["", "\n", true],
  ["\n", "", true],
  ["a\n", "a\n\n\n", false],
  ["a\n", "b\n", false],
  ["a\n", "a \n", false],
  ["a\r\n", "a\n", false],
  ["a\n", "\na\n", false],
];

for (const [base, mine, expected] of BODY_CASES) {
  test(`sameBody(${JSON.stringify(base)}, ${JSON.stringify(mine)}) is ${expected}`, (t) => {
    t.is(sameBody(base, mine), expected);
  });
}

test("sameBody is symmetric and reflexive", (t) => {
  fc.assert(
    fc.property(fc.string(), fc.string(), (a, b) => {
      t.true(sameBody(a, a));
      t.is(sameBody(a, b), sameBody(b, a));
    }),
    fuzzParams(100),
  );
});

const CHANGE_CASES: readonly {
  readonly name: string;
  readonly base: RecordFields;
  readonly mine: RecordFields;
  readonly baseBody?: string;
  readonly mineBody?: string;
  readonly expected: unknown;
}[] = [
  { name: "nothing changed", base: ISSUE_42, mine: ISSUE_42, expected: { fields: {} } },
  {
    name: "only the changed writable field",
    base: ISSUE_42,
    mine: { ...ISSUE_42, title: "T", version: 9, id: 1, updated_at: "2030-01-01T00:00:00Z" },
    expected: { fields: { title: "T" } },
  },
  {
    name: "a missing non-optional field is unchanged, not cleared",
    base: ISSUE_42,
    mine: { title: "Fix login" },
    expected: { fields: {} },
  },
  {
    name: "a missing optional field clears it",
    base: { ...ISSUE_42, assignee: "dana" },
    mine: ISSUE_42,
    expected: { fields: { assignee: null } },
  },
  {
    name: "an explicit null assignee where the base had none is no change",
    base: ISSUE_42,
    mine: { ...ISSUE_42, assignee: null },
    expected: { fields: {} },
  },
  {
    name: "the body, when it differs by more than a final newline",
    base: ISSUE_42,
    mine: ISSUE_42,
    baseBody: "one\n",
    mineBody: "two\n",
    expected: { fields: {}, body: "two\n" },
  },
  {
    name: "an empty label list where the base had labels",
    base: ISSUE_42,
    mine: { ...ISSUE_42, labels: [] },
    expected: { fields: { labels: [] } },
  },
];

for (const c of CHANGE_CASES) {
  test(`changesBetween: ${c.name}`, (t) => {
    t.deepEqual(
      changesBetween(
        SIM_SCHEMA,
        { fields: c.base, body: c.baseBody ?? "" },
        { fields: c.mine, body: c.mineBody ?? "" },
      ),
      c.expected,
    );
  });
}

test("changesBetween never sends a server-controlled field", (t) => {
  const serverControlled = SIM_SCHEMA.fields.filter((spec) => spec.serverControlled).map((spec) => spec.name);
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 1e6 }), fc.integer({ min: 1, max: 1e6 }), (id, version) => {
      const changes = changesBetween(
        SIM_SCHEMA,
        { fields: ISSUE_42, body: "" },
        { fields: { ...ISSUE_42, id, version }, body: "" },
      );
      for (const name of serverControlled) t.false(name in changes.fields);
    }),
    fuzzParams(100),
  );
});

// ---------------------------------------------------------------------------------------------------------

test("problemSummary: empty for no problems", (t) => {
  t.is(problemSummary([]), "");
});

test("problemSummary: the first problem's path and first line, and how many more", (t) => {
  t.is(
    problemSummary([
      { path: "issues/a.md", message: "the frontmatter is not valid YAML\n  expected: `key: value` lines" },
      { path: "notes.txt", message: "only issues/<name>.md files are records" },
      { path: "b.txt", message: "x" },
    ]),
    "issues/a.md: the frontmatter is not valid YAML (and 2 more)",
  );
  t.is(problemSummary([{ path: "notes.txt", message: "outside" }]), "notes.txt: outside");
});

test("problemSummary: a long first line is cut, so git's [remote rejected] line stays one line", (t) => {
  const summary = problemSummary([{ path: "issues/a.md", message: `${"y".repeat(300)}\nsecond` }]);
  t.true(summary.length < 150, summary);
  t.true(summary.startsWith("issues/a.md: yyyy"));
  t.true(summary.endsWith("…"), summary);
  t.false(summary.includes("\n"));
});

test("problemSummary: quotes and backslashes in the message reach git's line as they are", (t) => {
  t.is(
    problemSummary([{ path: "issues/b.md", message: 'unknown field `"priority"`\n  expected: …' }]),
    'issues/b.md: unknown field `"priority"`',
  );
});

// ---------------------------------------------------------------------------------------------------------

const edit = (path: string): PlanProblem => ({ path, message: "m", remedy: { kind: "edit", file: path } });
const untrack = (path: string): PlanProblem => ({
  path,
  message: "m",
  remedy: { kind: "untrack", file: path },
});

const NEXT_COMMANDS: readonly (readonly [string, readonly PlanProblem[], string, string | undefined])[] = [
  [
    "a file outside the folder: out of the commit, kept on disk",
    [untrack("NOTES.md")],
    "",
    'git rm --cached NOTES.md && git commit -m "Keep NOTES.md out of svc" && git push',
  ],
  [
    "from a subfolder, paths are relative to it",
    [untrack("NOTES.md"), edit("issues/0002.md")],
    "issues/",
    'git rm --cached ../NOTES.md && git add 0002.md && git commit -m "Fix what svc refused to push" && git push',
  ],
  [
    "one file with two problems is named once",
    [edit("issues/a.md"), edit("issues/a.md")],
    "docs/deep/",
    'git add ../../issues/a.md && git commit -m "Fix issues/a.md" && git push',
  ],
  [
    "conflict markers are resolved",
    [{ path: "issues/0002.md", message: "m", remedy: { kind: "resolve", file: "issues/0002.md" } }],
    "",
    'git add issues/0002.md && git commit -m "Resolve issues/0002.md" && git push',
  ],
  [
    "the leftover of a duplicate is removed, not fixed",
    [
      { path: "issues/a.md", message: "m", remedy: { kind: "remove", file: "issues/b.md" } },
      edit("issues/b.md"),
    ],
    "",
    'git rm issues/b.md && git commit -m "Fix what svc refused to push" && git push',
  ],
  [
    "names a shell would split or expand are quoted",
    [untrack("my notes.txt"), edit("issues/it's $HOME.md")],
    "",
    `git rm --cached "my notes.txt" && git add 'issues/it'\\''s $HOME.md' && git commit -m "Fix what svc refused to push" && git push`,
  ],
  [
    "a name with control characters is spelled by printf, and the commit message shows them as U+FFFD",
    [untrack("notes/\u001b]0;x\u0007.txt")],
    "issues/",
    `git rm --cached "$(printf '../notes/\\033]0;x\\007.txt')" && git commit -m "Keep notes/\ufffd]0;x\ufffd.txt out of svc" && git push`,
  ],
  [
    "no command when a problem has none",
    [untrack("a"), { path: "issues/../x.md", message: "m" }],
    "",
    undefined,
  ],
];

for (const [name, problems, prefix, expected] of NEXT_COMMANDS) {
  test(`nextCommand: ${name}`, (t) => {
    t.is(nextCommand(problems, prefix)?.command, expected);
  });
}

test("nextCommand: every refused file of a plan has a remedy, except a path no working tree can hold", (t) => {
  const result = plan(
    [
      added("notes.txt", "text"),
      added("issues/link.md", "text", "120000"),
      modified("issues/0042.md", "base", "broken"),
      added("issues/9999.md", "ghost"),
      added("issues/c.md", "conflicted"),
      added("issues/../x.md", "text"),
    ],
    {
      text: "x",
      base: BASE_42,
      broken: "no frontmatter",
      ghost: file({ ...ISSUE_42, id: 9999 }),
      conflicted: "<<<<<<< a\n=======\n>>>>>>> b\n",
    },
  );
  t.deepEqual(
    result.problems.map((problem) => [problem.path, problem.remedy?.kind]),
    [
      ["issues/c.md", "resolve"],
      ["notes.txt", "untrack"],
      ["issues/link.md", "untrack"],
      ["issues/0042.md", "edit"],
      ["issues/9999.md", "edit"],
      ["issues/../x.md", undefined],
    ],
  );
});

/**
 * The push planner (DESIGN.md §4 "Push"): from the files a push changed, relative to the server state the
 * user based them on, the REST writes to make. Pure: contents, base tokens and the create journal come in
 * as functions, so every rule here has a table-driven test.
 *
 * Rules:
 * - Only `<folder>/<name>.md` files are records; anything else a push adds or changes is refused, naming
 *   the file. Deleting such a file needs no write: the server never had it.
 * - A new file without an id is a create, unless the create journal says an earlier push already created
 *   a record from the file at that path: then it is that record (an update of what the create sent, or
 *   nothing). A file with the id of an existing record is a duplicate (refused), unless that record's own
 *   file is deleted in the same push (a rename: an update, renamed back later).
 * - A changed file is an update carrying only the writable fields that differ from the base, plus the body
 *   if it differs (`backends/record-diff.ts`). Server-controlled fields (`id`, `version`, timestamps) are
 *   never sent: an edit of them is ignored and reported.
 * - A deleted file is a delete.
 * - Whatever a write sends must be within the backend's declared field limits: a push that breaks one is
 *   refused before any write, naming file, field and limit.
 */

import { posix } from "node:path";
import type { BaseToken, RecordChanges } from "../backends/backend.js";
import {
  conflictMarkerLine,
  type FieldValue,
  parseRecordFile,
  type RecordContent,
  type RecordSchema,
  recordKeyOf,
  UnknownFieldError,
} from "../backends/record.js";
import { desiredRecord, editedServerFields, isNoChange, recordChanges } from "../backends/record-diff.js";
import { formatCount } from "../core/count.js";
import { shellWord, terminalSafe, UserFacingError } from "../core/errors.js";
import type { DiffEntry } from "../git/plumbing.js";

export type { DiffEntry };

export type PlannedWrite =
  | {
      readonly kind: "create";
      readonly path: string;
      /** The file's blob in the pushed commit. */
      readonly oid: string;
      readonly changes: RecordChanges;
    }
  | {
      readonly kind: "update";
      readonly key: string;
      readonly path: string;
      readonly base: BaseToken;
      readonly changes: RecordChanges;
      /** The record's writable fields and body as the user wants them (for replay and merge checks). */
      readonly desired: RecordContent;
      /** The record as the user's base had it. */
      readonly original: RecordContent;
    }
  | { readonly kind: "delete"; readonly key: string; readonly path: string; readonly base: BaseToken };

/**
 * What clears a problem, as part of the one command a refused push prints: `edit` (the user fixes the file
 * as the message says, then stages it), `resolve` (the same for conflict markers), `untrack` (the file stays
 * on disk but leaves the commit: `git rm --cached`), `remove` (`git rm`).
 */
export interface Remedy {
  readonly kind: "edit" | "resolve" | "untrack" | "remove" | "restore";
  /** The file the command acts on: the problem's own, or the other file of a duplicate. */
  readonly file: string;
  /** `restore`: the commit whose version of the file is brought back (`git checkout <source> -- <file>`). */
  readonly source?: string;
}

export interface PlanProblem {
  readonly path: string;
  readonly message: string;
  /** Undefined where no command from a working tree can help (a crafted tree with a `..` path). */
  readonly remedy?: Remedy;
}

export interface Plan {
  readonly writes: PlannedWrite[];
  readonly problems: PlanProblem[];
  /** Files whose server-controlled fields were edited; the edits are not sent. */
  readonly ignoredEdits: { readonly path: string; readonly fields: string[] }[];
}

/** A record an earlier push created from a file at this path (the create journal). */
export interface JournalMatch {
  readonly key: string;
  /**
   * When the user's base does not hold the record yet (that push stopped before its result commit): what
   * the create sent and the record's token right after it, the base of the file's later edits.
   */
  readonly created?: { readonly original: RecordContent; readonly token: BaseToken };
}

export interface PlanInput {
  readonly schema: RecordSchema;
  readonly entries: readonly DiffEntry[];
  /** The bytes of a blob of the base or the pushed tree. */
  readonly read: (oid: string) => Buffer;
  /** The concurrency token of record `key` in the user's base, or undefined if the base has no such record. */
  readonly baseToken: (key: string) => BaseToken | undefined;
  /**
   * The record an earlier push created from the id-less file at `path`: `baseOid` is the file's blob on
   * the base side (undefined for a file the push adds).
   */
  readonly journal: (path: string, baseOid: string | undefined) => JournalMatch | undefined;
  /** The largest body a write may send (bytes of UTF-8). */
  readonly maxBodyBytes: number;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The largest file the planner reads: far above any backend's record size, a bound on memory only. */
const MAX_READ_BYTES = 64 * 1024 * 1024;

/** What in `changes` breaks one of the schema's field limits or the body limit, as messages. */
export function limitProblems(schema: RecordSchema, changes: RecordChanges, maxBodyBytes: number): string[] {
  const problems: string[] = [];
  const over = (what: string, limit: string) =>
    problems.push(`${what}; ${schema.kind} accepts at most ${limit}`);
  for (const spec of schema.fields) {
    const value: FieldValue | undefined = changes.fields[spec.name];
    const limit = spec.limit;
    if (!limit || value === undefined || value === null) continue;
    if (typeof value === "string") {
      if (limit.nonBlank && value.trim() === "")
        problems.push(`field \`${spec.name}\` is empty; ${schema.kind} needs some text in it`);
      if (limit.maxLength !== undefined && value.length > limit.maxLength)
        over(
          `field \`${spec.name}\` is ${formatCount(value.length)} characters`,
          `${formatCount(limit.maxLength)}`,
        );
    } else if (Array.isArray(value)) {
      if (limit.maxItems !== undefined && value.length > limit.maxItems)
        over(
          `field \`${spec.name}\` has ${formatCount(value.length)} entries`,
          `${formatCount(limit.maxItems)}`,
        );
      for (const item of value) {
        const why = limit.reserved?.(item);
        if (why !== undefined) problems.push(`field \`${spec.name}\` has the entry ${item}: ${why}`);
      }
      const long = limit.maxItemLength;
      const bad = value.find((item) => item.trim() === "" || (long !== undefined && item.length > long));
      if (bad !== undefined) {
        problems.push(
          bad.trim() === ""
            ? `field \`${spec.name}\` has an empty entry; remove it`
            : `field \`${spec.name}\` has an entry of ${formatCount(bad.length)} characters; ${schema.kind} accepts at most ${formatCount(long ?? 0)}`,
        );
      }
    }
  }
  if (changes.body !== undefined) {
    const bytes = Buffer.byteLength(changes.body);
    if (bytes > maxBodyBytes)
      over(`the body is ${formatCount(bytes)} bytes`, `${formatCount(maxBodyBytes)} bytes`);
    const characters = schema.bodyMaxLength;
    if (characters !== undefined && changes.body.length > characters)
      over(
        `the body is ${formatCount(changes.body.length)} characters`,
        `${formatCount(characters)} characters`,
      );
    const problem = schema.bodyProblem?.(changes.body);
    if (problem !== undefined) problems.push(problem);
  }
  return problems;
}

/** A path git could hand us that is no file inside a working tree (`issues/../../x.md`, crafted trees). */
export function isUnsafePath(path: string): boolean {
  return (
    path.startsWith("/") ||
    path.includes("\0") ||
    path.split("/").some((part) => part === "" || part === "." || part === "..")
  );
}

export function planPush(input: PlanInput): Plan {
  return new Planner(input).plan();
}

/** The planner of record files; helper/push-plan-comments.ts extends it for comment files. */
export class Planner {
  protected readonly problems: PlanProblem[] = [];
  protected readonly ignoredEdits: Plan["ignoredEdits"] = [];
  protected readonly writes: PlannedWrite[] = [];
  /** Which file a write of each key came from (and whether it has no id): one record, one file. */
  private readonly writtenBy = new Map<string, { path: string; idless: boolean }>();
  private readonly recordFile: RegExp;
  private readonly parsed = new Map<string, RecordContent | undefined>();
  /** `path\0blob` of each file the push adds or changes → its blob in the base ("" for an added file). */
  private readonly baseOfPushed = new Map<string, string>();

  constructor(protected readonly input: PlanInput) {
    this.recordFile = new RegExp(`^${input.schema.folder}/[^/]+\\.md$`);
    for (const entry of input.entries) {
      if (entry.status === "D") continue;
      this.baseOfPushed.set(`${entry.path}\0${entry.newOid}`, entry.status === "A" ? "" : entry.oldOid);
    }
  }

  plan(): Plan {
    const { entries } = this.input;
    // Deleted record files by key: an added file carrying one of these ids is that record, renamed, and
    // the deletion of its old file is no delete.
    const deletedKeys = new Map<string, DiffEntry>();
    for (const entry of entries) {
      if (entry.status !== "D" || !this.isRecordEntry(entry, false)) continue;
      const key = keyOfBlob(this.input.schema, this.parse(entry.path, entry.oldOid));
      if (key) deletedKeys.set(key, entry);
    }
    const renamed = new Set<string>();
    for (const entry of entries) {
      if (entry.status !== "A" || !this.isRecordEntry(entry, false)) continue;
      const key = keyOfBlob(this.input.schema, this.parse(entry.path, entry.newOid));
      if (key && deletedKeys.has(key)) renamed.add(key);
    }
    const addedIds = new Map<string, string>();
    for (const entry of entries) {
      if (!this.isRecordEntry(entry, true)) continue;
      if (entry.status === "D") {
        const key = keyOfBlob(this.input.schema, this.parse(entry.path, entry.oldOid));
        if (!key || !renamed.has(key)) this.planDelete(entry);
        continue;
      }
      const mine = this.parse(entry.path, entry.newOid);
      if (!mine) continue;
      const mineKey = recordKeyOf(this.input.schema, mine.fields);
      if (entry.status === "A" && mineKey !== undefined) {
        const other = addedIds.get(mineKey);
        if (other) {
          this.refuse(entry.path, `two files have id ${mineKey}: ${other} and this one; keep one`, "remove");
          continue;
        }
        addedIds.set(mineKey, entry.path);
        const was = deletedKeys.get(mineKey);
        const base = was && this.parse(was.path, was.oldOid);
        if (base) this.planUpdate(mineKey, entry.path, base, mine);
        else if (!was) {
          this.refuse(
            entry.path,
            this.input.baseToken(mineKey)
              ? `two files have id ${mineKey}; a new record must not carry an id (remove the \`id:\` line to create one)`
              : `id ${mineKey} is not a record on the server; remove the \`id:\` line to create a new record`,
            "edit",
          );
        }
        continue;
      }
      if (entry.status === "A") {
        this.planIdless(entry, undefined, mine);
        continue;
      }
      const base = this.parse(entry.path, entry.oldOid);
      if (!base) continue;
      const baseKey = recordKeyOf(this.input.schema, base.fields);
      if (baseKey) this.planUpdate(baseKey, entry.path, base, mine);
      else this.planIdless(entry, base, mine);
    }
    return { writes: this.writes, problems: this.problems, ignoredEdits: this.ignoredEdits };
  }

  protected refuse(path: string, message: string, remedy?: Remedy["kind"] | Remedy): void {
    const how = typeof remedy === "string" ? { kind: remedy, file: path } : remedy;
    this.problems.push(how ? { path, message, remedy: how } : { path, message });
  }

  /**
   * Whether `entry` is a record file; refuses (and says why) anything else the push adds or changes. A
   * deleted file that was no record needs no write and no refusal.
   */
  private isRecordEntry(entry: DiffEntry, report: boolean): boolean {
    const { folder } = this.input.schema;
    if (isUnsafePath(entry.path)) {
      const problem = `the path is not a file inside the repository (it has an empty, \`.\` or \`..\` part); a record is ${folder}/<name>.md`;
      if (report) this.refuse(entry.path, problem);
      return false;
    }
    if (!this.recordFile.test(entry.path)) {
      if (report && entry.status !== "D")
        this.refuse(
          entry.path,
          `only ${folder}/<name>.md files are records, and svc pushes nothing else`,
          "untrack",
        );
      return false;
    }
    if (
      entry.status === "T" ||
      (entry.status !== "D" && entry.newMode !== "100644" && entry.newMode !== "100755")
    ) {
      if (report)
        this.refuse(entry.path, "a record must be a regular file (not a link or a submodule)", "untrack");
      return false;
    }
    return true;
  }

  /**
   * The first `<<<<<<<` line of conflict markers a merge left in the pushed blob `oid` of `path`, unless the
   * file had them before (its base: the server's record, whose content they then are).
   */
  protected unresolvedConflict(path: string, oid: string, text: string): number | undefined {
    const base = this.baseOfPushed.get(`${path}\0${oid}`);
    if (base === undefined) return undefined; // not a pushed blob: the server's state
    const line = conflictMarkerLine(text);
    if (line === undefined || base === "") return line;
    return conflictMarkerLine(this.input.read(base).toString("utf8")) === undefined ? line : undefined;
  }

  /** Each (path, blob) is parsed once, so a bad file is reported once however often the plan looks at it. */
  protected parse(path: string, oid: string): RecordContent | undefined {
    const key = `${path}\0${oid}`;
    if (!this.parsed.has(key)) this.parsed.set(key, this.parseOnce(path, oid));
    return this.parsed.get(key);
  }

  private parseOnce(path: string, oid: string): RecordContent | undefined {
    const bytes = this.input.read(oid);
    if (bytes.length > MAX_READ_BYTES) {
      this.refuse(
        path,
        `the file is ${formatCount(bytes.length)} bytes; svc reads record files of at most ${formatCount(MAX_READ_BYTES)} bytes`,
        "edit",
      );
      return undefined;
    }
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      this.refuse(path, "the file is not valid UTF-8; save it as UTF-8", "edit");
      return undefined;
    }
    const conflict = this.unresolvedConflict(path, oid, text);
    if (conflict !== undefined) {
      // Before the YAML parser, which would call the markers a key error a line further down.
      this.refuse(
        path,
        `unresolved conflict markers (<<<<<<<) at line ${conflict}\n` +
          "  expected: one version of each conflicting part: keep the lines you want, delete the lines " +
          "<<<<<<< …, ======= and >>>>>>> …",
        "resolve",
      );
      return undefined;
    }
    // A blob the push does not carry is a server state svc rendered (a base): read with the fields it may
    // have that the schema has since lost (a tracker field removed or renamed on the server) left out.
    const pushed = this.baseOfPushed.get(`${path}\0${oid}`);
    try {
      return this.parseText(path, text, pushed === undefined);
    } catch (error) {
      if (!(error instanceof UserFacingError)) throw error;
      this.refuse(path, error.message.replace(`${path}: `, "") + this.lostFieldHint(error, pushed), "edit");
      return undefined;
    }
  }

  /**
   * When a pushed file's unknown field is one its base had (svc wrote that line, from a field the server has
   * since removed or renamed), what to do about it.
   */
  private lostFieldHint(error: UserFacingError, base: string | undefined): string {
    if (!(error instanceof UnknownFieldError) || !base) return "";
    const name = error.field;
    const had = this.input.read(base).toString("utf8").split("\n");
    if (!had.some((line) => line.startsWith(`${name}:`))) return "";
    return `\n  the server has no field \`${name}\` any more (removed or renamed there since your last fetch, which wrote this line): delete the line (git pull shows the files as the server has them now)`;
  }

  /** A file's text, read with the canonical parser; `rendered`: svc's own rendering of a server state. */
  protected parseText(path: string, text: string, rendered = false): RecordContent {
    return parseRecordFile(this.input.schema, path, text, rendered);
  }

  /** Adds `write` unless another file already writes the same record, or it breaks a limit. */
  protected add(write: PlannedWrite, changes?: RecordChanges, idless = false): void {
    if (write.kind !== "create") {
      const other = this.writtenBy.get(write.key);
      if (other) {
        // The file without an id is the leftover of a create: that is the one to remove.
        const leftover = idless || !other.idless ? write.path : other.path;
        this.refuse(
          write.path,
          `${other.path} and this file are both record ${write.key}; keep your edits in one and remove ${leftover}`,
          { kind: "remove", file: leftover },
        );
        return;
      }
      this.writtenBy.set(write.key, { path: write.path, idless });
    }
    const broken = changes ? limitProblems(this.input.schema, changes, this.input.maxBodyBytes) : [];
    for (const problem of broken) this.refuse(write.path, problem, "edit");
    if (broken.length === 0) this.writes.push(write);
  }

  private planUpdate(
    key: string,
    path: string,
    base: RecordContent,
    mine: RecordContent,
    token?: BaseToken,
    idless = false,
  ): void {
    const found = token ?? this.input.baseToken(key);
    if (!found) {
      this.refuse(path, `record ${key} is not in the server state this push is based on`);
      return;
    }
    const edited = editedServerFields(this.input.schema, base, mine);
    if (edited.length > 0) this.ignoredEdits.push({ path, fields: edited });
    const desired = desiredRecord(this.input.schema, base, mine);
    const changes = recordChanges(this.input.schema, base, desired);
    if (isNoChange(changes)) return;
    this.add({ kind: "update", key, path, base: found, changes, desired, original: base }, changes, idless);
  }

  /**
   * A file without an id: a create, or — when the journal knows a record made from the file at this path
   * — that record. `base` is the file on the base side (undefined when the push adds it).
   */
  private planIdless(entry: DiffEntry, base: RecordContent | undefined, mine: RecordContent): void {
    const match = this.input.journal(entry.path, base ? entry.oldOid : undefined);
    if (match?.created) {
      this.planUpdate(match.key, entry.path, match.created.original, mine, match.created.token, true);
    } else if (match && base) {
      this.planUpdate(match.key, entry.path, base, mine, undefined, true);
    } else {
      const changes = {
        fields: desiredRecord(this.input.schema, { fields: {}, body: "" }, mine).fields,
        body: mine.body,
      };
      this.add({ kind: "create", path: entry.path, oid: entry.newOid, changes }, changes);
    }
  }

  private planDelete(entry: DiffEntry): void {
    const base = this.parse(entry.path, entry.oldOid);
    if (!base) return;
    const key = recordKeyOf(this.input.schema, base.fields);
    const match = key ? undefined : this.input.journal(entry.path, entry.oldOid);
    // A file this user created in a push that never reached the server: nothing to delete.
    if (!key && !match) return;
    const target = key ?? match?.key ?? "";
    const token = match?.created?.token ?? this.input.baseToken(target);
    if (!token) {
      if (key) this.refuse(entry.path, `record ${key} is not in the server state this push is based on`);
      return;
    }
    this.add({ kind: "delete", key: target, path: entry.path, base: token });
  }
}

function keyOfBlob(schema: RecordSchema, content: RecordContent | undefined): string | undefined {
  return content && recordKeyOf(schema, content.fields);
}

/** A one-line summary of a plan's problems for git's `[remote rejected]` line. */
export function problemSummary(problems: readonly PlanProblem[]): string {
  const first = problems[0];
  if (!first) return "";
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : "";
  // Cut by code points, not through excerpt(): its JSON quoting would show up as `\"` in git's output.
  const line = Array.from(first.message.split("\n")[0] ?? "");
  const short = line.length <= 118 ? line.join("") : `${line.slice(0, 117).join("")}…`;
  return `${first.path}: ${short}${more}`;
}

/** `path` (from the repository's top) as typed in `prefix`, the user's folder in it (git's `GIT_PREFIX`: `sub/`). */
export function pathFrom(prefix: string, path: string): string {
  return shellWord(posix.relative(`/${prefix}`, `/${path}`));
}

/** What a refused push asks the user to do: fix some files by hand, then run one command. */
export interface NextCommand {
  /** Files to fix first, as their problems say (repository paths). */
  readonly fix: readonly string[];
  /** Files the command takes out of the commit but leaves on disk. */
  readonly untracked: readonly string[];
  /** Runnable as printed from `prefix`: no editor opens, and the last step is the push. */
  readonly command: string;
}

/**
 * The one command that clears `problems` (once the files to fix are fixed), run from `prefix`; undefined
 * when a problem has no remedy. A new commit, never `--amend`: an amend opens an editor without `-m`, and
 * fails when taking the file out empties the commit.
 */
export function nextCommand(problems: readonly PlanProblem[], prefix: string): NextCommand | undefined {
  const byKind = new Map<Remedy["kind"], Set<string>>();
  for (const { remedy } of problems) {
    if (!remedy) return undefined;
    const files = byKind.get(remedy.kind) ?? new Set<string>();
    byKind.set(remedy.kind, files.add(remedy.file));
  }
  const files = (...kinds: Remedy["kind"][]) => [
    ...new Set(kinds.flatMap((kind) => [...(byKind.get(kind) ?? [])])),
  ];
  const removed = new Set(files("remove", "untrack", "restore"));
  const fix = files("edit", "resolve").filter((file) => !removed.has(file));
  const words = (list: readonly string[]) => list.map((file) => pathFrom(prefix, file)).join(" ");
  const steps: string[] = [];
  // Each restored file from the commit its problem names (they are all the push's base).
  const sources = new Map(
    problems.flatMap(({ remedy }) => (remedy?.source ? [[remedy.file, remedy.source]] : [])),
  );
  for (const source of new Set(sources.values())) {
    const restored = files("restore").filter((file) => sources.get(file) === source);
    if (restored.length > 0) steps.push(`git checkout ${source} -- ${words(restored)}`);
  }
  if (files("untrack").length > 0) steps.push(`git rm --cached ${words(files("untrack"))}`);
  if (files("remove").length > 0) steps.push(`git rm ${words(files("remove"))}`);
  if (fix.length > 0) steps.push(`git add ${words(fix)}`);
  const all = [...removed, ...fix];
  const [kind] = byKind.keys();
  const verb = {
    edit: "Fix",
    resolve: "Resolve",
    remove: "Remove",
    untrack: "Keep",
    restore: "Restore",
  } as const;
  const message =
    all.length === 1 && byKind.size === 1 && kind
      ? `${verb[kind]} ${all[0]}${kind === "untrack" ? " out of svc" : ""}`
      : "Fix what svc refused to push";
  // A control character in a file's name stays out of the commit message (git log would print it raw).
  steps.push(`git commit -m ${shellWord(terminalSafe(message))}`, "git push");
  return { fix, untracked: files("untrack"), command: steps.join(" && ") };
}

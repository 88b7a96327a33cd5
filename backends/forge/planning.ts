/**
 * What plans an issue on the forge (issue 35): the repository's milestones and issue types, asked once per
 * push and only when a write changes one; the checks a push makes against them before any write; and the
 * sub-issue link calls that set an issue's parent.
 *
 * - Milestones: `GET /repos/{o}/{r}/milestones?state=all&per_page=100` (paged by `Link`): a title is sent as
 *   its milestone's number.
 * - Issue types: `GET /repos/{o}/{r}/issue-types`; a repository whose owner has none answers 404.
 * - Parent: the parent named must be an issue of the repository (a conditional GET of it); `DELETE /repos/{o}/{r}/issues/{old}/sub_issue` then `POST /repos/{o}/{r}/issues/{new}/sub_issues`,
 *   each with `{"sub_issue_id": <the child's database id>}`. The description's `replace_parent` would do both
 *   in one call; issue 35 asks for the removal first, so a refused link leaves no issue under a parent the
 *   user did not name.
 */
import { isObject } from "../../core/checks.js";
import { excerpt, type SvcError } from "../../core/errors.js";
import type { WriteToCheck } from "../backend.js";
import type { FieldValue } from "../record.js";
import { type RestResponse, UnexpectedShapeError } from "../rest.js";
import type { ForgeIssue } from "./issue.js";
import { type ForgePages, queryString } from "./pages.js";

/** What the planning calls need from the backend. */
export interface PlanningWire {
  readonly pages: ForgePages;
  /** `owner/repo`. */
  readonly project: string;
  call(method: string, url: string, body?: unknown): Promise<RestResponse>;
  /** The repository's API URL with `rest` after it. */
  repoPath(rest: string): string;
  failure(what: string, response: RestResponse): SvcError;
  /** Issue `key` as it is now (a conditional GET), or undefined when there is none (or a pull request). */
  issue(key: string): Promise<ForgeIssue | undefined>;
}

/** Why one write of a push cannot be made, said about its file. */
interface WriteProblem {
  readonly path: string;
  readonly message: string;
}

/** The most milestones the forge serves per result page. */
const PER_PAGE = 100;

/** A parent a push may write: a number in the same repository; undefined for none. */
type Parent = number | undefined;

export class ForgePlanning {
  private milestones: Promise<ReadonlyMap<string, number>> | undefined;
  private issueTypes: Promise<readonly string[] | undefined> | undefined;
  private canPush: Promise<boolean | undefined> | undefined;

  constructor(private readonly wire: PlanningWire) {}

  /** The repository's milestones, open and closed, title → number; asked once per process. */
  milestoneNumbers(): Promise<ReadonlyMap<string, number>> {
    this.milestones ??= this.readMilestones();
    return this.milestones;
  }

  private async readMilestones(): Promise<ReadonlyMap<string, number>> {
    const url = this.wire.repoPath(`/milestones?${queryString({ state: "all", per_page: PER_PAGE })}`);
    const what = `listing the milestones of ${this.wire.project}`;
    const pages = await this.wire.pages.walk(url, what, {
      read: (value, _what, status) => milestonesOf(value, what, status),
      key: (milestone) => String(milestone.number),
      updatedAt: () => "",
    });
    return new Map(pages.items.map((milestone) => [milestone.title, milestone.number]));
  }

  /** The names of the repository's issue types; undefined where its owner has none (404). */
  private types(): Promise<readonly string[] | undefined> {
    this.issueTypes ??= (async () => {
      const what = `listing the issue types of ${this.wire.project}`;
      const response = await this.wire.call("GET", this.wire.repoPath("/issue-types"));
      if (response.status === 404) return undefined;
      if (response.status !== 200) throw this.wire.failure(what, response);
      const value: unknown = JSON.parse(response.body.toString("utf8"));
      if (!Array.isArray(value) || value.some((type) => !isObject(type) || typeof type.name !== "string"))
        throw this.wire.failure(`${what}: the answer is no list of named issue types`, response);
      return value.map((type) => (type as { name: string }).name);
    })();
    return this.issueTypes;
  }

  /**
   * Whether the token may push to the repository (`GET /repos/{o}/{r}`'s `permissions.push`); undefined when
   * the answer does not say. Asked once per process.
   */
  private pushAccess(): Promise<boolean | undefined> {
    this.canPush ??= (async () => {
      const response = await this.wire.call("GET", this.wire.repoPath(""));
      if (response.status !== 200)
        throw this.wire.failure(`reading repository ${this.wire.project}`, response);
      const value: unknown = JSON.parse(response.body.toString("utf8"));
      const permissions = isObject(value) ? value.permissions : undefined;
      return isObject(permissions) && typeof permissions.push === "boolean" ? permissions.push : undefined;
    })();
    return this.canPush;
  }

  /**
   * The writes of a push that cannot be made, before any is: a milestone or type change the forge would drop
   * (no push access), a milestone title the repository does not have, an issue type it does not list, a
   * parent for an issue that has one in another repository (or the issue itself). The repository and the
   * lists are asked only when a write changes a milestone or a type.
   */
  async problems(writes: readonly WriteToCheck[]): Promise<WriteProblem[]> {
    const problems: WriteProblem[] = [];
    for (const write of writes) {
      const said = write.changes.fields;
      const refuse = (message: string) => problems.push({ path: write.path, message });
      const plans = said.milestone !== undefined || said.type !== undefined;
      if (plans && (await this.pushAccess()) === false) {
        refuse(
          `FORGE_TOKEN has no push access to ${this.wire.project}, and the forge drops milestone and type changes from such a token without a word; get push access, or put those lines back as they were`,
        );
        continue;
      }
      if (typeof said.milestone === "string") {
        const known = await this.milestoneNumbers();
        if (!known.has(said.milestone))
          refuse(
            `milestone ${quoted(said.milestone)} is not a milestone of ${this.wire.project}; ${named("milestones", [...known.keys()])}`,
          );
      }
      if (typeof said.type === "string") {
        const known = await this.types();
        if (known === undefined)
          refuse(
            `${this.wire.project} has no issue types (an organization's repositories have them); remove the line \`type: ${said.type}\``,
          );
        else if (!known.includes(said.type))
          refuse(
            `type ${quoted(said.type)} is not an issue type of ${this.wire.project}; ${named("types", known)}`,
          );
      }
      const parentProblem = await this.parentProblem(write, said.parent);
      if (parentProblem) refuse(parentProblem);
    }
    return problems;
  }

  /**
   * Why the parent a write says cannot be written, or undefined: the issue itself, an issue the repository
   * does not have (asked: one conditional GET), or an issue whose file shows no parent but which has one in
   * another repository (asked likewise), which svc cannot change. A link refused after a create's POST would
   * leave the new issue without it, so it is checked before.
   */
  private async parentProblem(
    write: WriteToCheck,
    said: FieldValue | undefined,
  ): Promise<string | undefined> {
    const key = write.key;
    const before = write.original?.fields.parent;
    // Another repository's parent is shown, never written: changing or removing the line is refused.
    if (typeof before === "string")
      return said === undefined || said === before
        ? undefined
        : `issue ${key} is a sub-issue of ${before}, in another repository, which svc cannot change; put the line back as it was: parent: "${before}"`;
    if (typeof said === "string")
      return `parent: ${said}: svc links an issue to a parent of ${this.wire.project} only; name one of its issues by number`;
    if (typeof said !== "number") return undefined;
    if (String(said) === key) return `an issue cannot be its own parent (parent: ${said})`;
    if (!(await this.wire.issue(String(said))))
      return `parent: ${said}: ${this.wire.project} has no issue ${said} (a pull request cannot be a parent)`;
    if (key === undefined || write.original?.fields.parent !== undefined) return undefined;
    const parent = (await this.wire.issue(key))?.record.content.fields.parent;
    const foreign = typeof parent === "string" ? parent : undefined;
    return (
      foreign &&
      `issue ${key} is a sub-issue of ${foreign}, in another repository, which svc cannot change; remove the line \`parent: ${said}\``
    );
  }

  /**
   * Moves `child` from parent `from` to parent `to` (either none): the old link removed first, then the
   * new one made, as issue 35 says.
   */
  async link(child: Pick<ForgeIssue, "number" | "id">, from: Parent, to: Parent): Promise<void> {
    if (from === to) return;
    const body = { sub_issue_id: child.id };
    if (from !== undefined) {
      const what = `removing issue ${child.number} from the sub-issues of issue ${from}`;
      const response = await this.wire.call("DELETE", this.wire.repoPath(`/issues/${from}/sub_issue`), body);
      if (response.status !== 200) throw this.wire.failure(what, response);
    }
    if (to !== undefined) {
      const what = `adding issue ${child.number} to the sub-issues of issue ${to}`;
      const response = await this.wire.call("POST", this.wire.repoPath(`/issues/${to}/sub_issues`), body);
      if (response.status !== 201 && response.status !== 200) throw this.wire.failure(what, response);
    }
  }
}

/** The parent a record's fields name, for a link: a number, or undefined (none, or another repository's). */
export function parentNumber(value: FieldValue | undefined): Parent {
  return typeof value === "number" ? value : undefined;
}

function milestonesOf(value: unknown, what: string, status: number): { number: number; title: string }[] {
  if (!Array.isArray(value))
    throw new UnexpectedShapeError(`${what} answered without a list of milestones`, status);
  return value.map((item) => {
    if (!isObject(item) || typeof item.number !== "number" || typeof item.title !== "string")
      throw new UnexpectedShapeError(
        `${what} answered with a milestone without a number and a title`,
        status,
      );
    return { number: item.number, title: item.title };
  });
}

/** The value in quotes, cut to 80 characters. */
function quoted(value: string): string {
  return excerpt(value, 80);
}

/** `the milestones: A, B` or `it has no milestones`. */
function named(what: string, names: readonly string[]): string {
  return names.length === 0
    ? `it has no ${what}`
    : `the ${what}: ${names.map((name) => JSON.stringify(name)).join(", ")}`;
}

/**
 * The fake tracker's search: a parsed JQL query resolved against the site, the matching issues sorted and cached
 * per query and site version, cut into pages behind opaque `nextPageToken`s; and the approximate count. The two
 * faults a test can switch on live here: `repeatTokens` (every page hands out the token it was asked with) and
 * `lagging` (the count reads a snapshot).
 */
import { fail, isObject } from "./http.js";
import {
  type DateOperator,
  type JqlClause,
  JqlError,
  JqlParser,
  type JqlQuery,
  type JqlSort,
  type SortField,
} from "./jql.js";
import type { Selection } from "./shapes.js";
import type { Issue, Project, Tracker } from "./store.js";
import { wallClockToInstant } from "./time.js";
import { MAX_RESULTS_CEILING, REPEATED_TOKEN } from "./vendor-data.js";

type IssueTest = (issue: Issue) => boolean;

interface ResolvedQuery {
  readonly projects: readonly Project[];
  readonly tests: readonly IssueTest[];
  readonly orderBy: readonly JqlSort[];
}

/** ASSUMPTION: without ORDER BY, the issue navigator's default `created DESC`. */
const DEFAULT_ORDER: readonly JqlSort[] = [{ field: "created", descending: true }];
const ISSUE_KEY = /^[A-Za-z][A-Za-z0-9_]*-\d+$/;

function compareIssues(a: Issue, b: Issue, field: SortField): number {
  switch (field) {
    case "key":
      return a.project.key === b.project.key ? a.number - b.number : a.project.key < b.project.key ? -1 : 1;
    case "id":
      return Number(a.id) - Number(b.id);
    case "created":
      return a.created - b.created;
    case "updated":
      return a.updated - b.updated;
  }
}

/** ASSUMPTION: ties after the ORDER BY fields go by id, ascending. */
function sortIssues(issues: Issue[], orderBy: readonly JqlSort[]): Issue[] {
  const order = orderBy.length === 0 ? DEFAULT_ORDER : orderBy;
  return issues.sort((a, b) => {
    for (const sort of order) {
      const compared = compareIssues(a, b, sort.field);
      if (compared !== 0) return sort.descending ? -compared : compared;
    }
    return Number(a.id) - Number(b.id);
  });
}

/** FNV-1a, to tie a page token to the query it came from. */
function hashText(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

export interface SearchRequest {
  readonly jql: string;
  readonly nextPageToken: string | undefined;
  readonly maxResults: number;
  readonly selection: Selection;
}

export class Search {
  private cached: { readonly key: string; readonly issues: readonly Issue[] } | undefined;
  repeatTokens = false;

  constructor(
    private readonly tracker: Tracker,
    private readonly pageSize: number,
  ) {}

  /** One page of the query's issues and the token of the next one (undefined on the last page). */
  page(request: SearchRequest): { issues: readonly Issue[]; nextPageToken: string | undefined } {
    const matching = this.matching(request.jql);
    const size = Math.min(request.maxResults, this.pageSize, MAX_RESULTS_CEILING);
    if (this.repeatTokens) {
      const asked = request.nextPageToken;
      const offset = asked === undefined || asked === REPEATED_TOKEN ? 0 : this.offsetOf(asked, request.jql);
      return { issues: matching.slice(offset, offset + size), nextPageToken: asked ?? REPEATED_TOKEN };
    }
    const offset =
      request.nextPageToken === undefined ? 0 : this.offsetOf(request.nextPageToken, request.jql);
    const end = offset + size;
    return {
      issues: matching.slice(offset, end),
      nextPageToken: end < matching.length ? this.tokenFor(end, request.jql) : undefined,
    };
  }

  /**
   * ASSUMPTION: a token is an offset into the query's current result, so issues that move between pages while a
   * client pages (an edit re-sorting them) can be skipped or seen twice, as with any cursor that is not a snapshot.
   */
  private tokenFor(offset: number, jql: string): string {
    return Buffer.from(JSON.stringify({ o: offset, q: hashText(jql) })).toString("base64url");
  }

  private offsetOf(token: string, jql: string): number {
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
    } catch {
      decoded = undefined;
    }
    const offset = isObject(decoded) ? decoded.o : undefined;
    if (!isObject(decoded) || decoded.q !== hashText(jql) || typeof offset !== "number" || offset < 0) {
      // ASSUMPTION: the wording; Jira documents no error for a bad or foreign token.
      fail(400, "The nextPageToken is invalid or belongs to another query.");
    }
    return offset;
  }

  /** While set, `count` reads these issues of each project (a snapshot) instead of the current ones. */
  lagging: ReadonlyMap<Project, readonly Issue[]> | undefined;

  /** How many issues `jql` matches (its ORDER BY changes nothing); while `lagging`, among the snapshot's. */
  count(jql: string): number {
    const resolved = this.resolve(JqlParser.parse(jql));
    let count = 0;
    for (const project of resolved.projects) {
      for (const issue of this.lagging?.get(project) ?? project.issues.values())
        if (resolved.tests.every((test) => test(issue))) count++;
    }
    return count;
  }

  private matching(jql: string): readonly Issue[] {
    const key = `${this.tracker.version}\u0000${this.tracker.zone}\u0000${jql}`;
    if (this.cached?.key === key) return this.cached.issues;
    const resolved = this.resolve(JqlParser.parse(jql));
    const found: Issue[] = [];
    for (const project of resolved.projects) {
      for (const issue of project.issues.values()) {
        if (resolved.tests.every((test) => test(issue))) found.push(issue);
      }
    }
    const issues = sortIssues(found, resolved.orderBy);
    this.cached = { key, issues };
    return issues;
  }

  private resolve(query: JqlQuery): ResolvedQuery {
    let projects = this.tracker.projects.filter((project) => !project.hidden);
    const tests: IssueTest[] = [];
    for (const clause of query.clauses) {
      if (clause.kind === "list" && clause.field === "project") {
        const named = new Set(clause.values.map((value) => this.jqlProject(value)));
        projects = projects.filter((project) => named.has(project));
      } else {
        tests.push(this.test(clause));
      }
    }
    return { projects, tests, orderBy: query.orderBy };
  }

  private test(clause: JqlClause): IssueTest {
    if (clause.kind === "contains") {
      // ASSUMPTION: Jira's `~` is a word search with stemming; the fake matches a case-insensitive substring.
      const text = clause.text.toLowerCase();
      return (issue) => issue.summary.toLowerCase().includes(text);
    }
    if (clause.kind === "date") {
      const bound = wallClockToInstant(clause.wall, this.tracker.zone);
      const at = (issue: Issue) => issue[clause.field];
      const compare: Record<DateOperator, IssueTest> = {
        ">=": (issue) => at(issue) >= bound,
        ">": (issue) => at(issue) > bound,
        "<=": (issue) => at(issue) <= bound,
        "<": (issue) => at(issue) < bound,
      };
      return compare[clause.operator];
    }
    if (clause.field === "labels") {
      // ASSUMPTION: labels match exactly (case-sensitive).
      const labels = new Set(clause.values);
      return (issue) => issue.labels.some((label) => labels.has(label));
    }
    const field = clause.field === "parent" ? "parent" : "key";
    const issues = new Set(clause.values.map((value) => this.jqlIssue(value, field)));
    if (field === "key") return (issue) => issues.has(issue);
    return (issue) => issue.parent !== null && issues.has(issue.parent);
  }

  /** A project named in JQL: by key (any case), id or name; unknown and hidden ones are refused alike. */
  private jqlProject(value: string): Project {
    const project = this.tracker.projects.find(
      (candidate) =>
        !candidate.hidden &&
        (candidate.key.toLowerCase() === value.toLowerCase() ||
          candidate.id === value ||
          candidate.name === value),
    );
    if (!project) throw new JqlError(`The value '${value}' does not exist for the field 'project'.`);
    return project;
  }

  /** An issue named in JQL by key or id. ASSUMPTION: `parent` answers with the wording Jira uses for `key`. */
  private jqlIssue(value: string, field: "key" | "parent"): Issue {
    if (!ISSUE_KEY.test(value) && !/^\d+$/.test(value)) {
      throw new JqlError(`The issue key '${value}' for field '${field}' is invalid.`);
    }
    const issue = this.tracker.visibleIssue(value);
    if (!issue) throw new JqlError(`An issue with key '${value}' does not exist for field '${field}'.`);
    return issue;
  }
}

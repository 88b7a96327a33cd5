/**
 * The deterministic seed loader (Document 1 "What the service does" 5; DESIGN.md §5).
 *
 * File shape: `{"projects":[{"slug","name","description","issues":[{title,status,labels,body,assignee,
 * comments:[{author,body}]}]}]}`. Loading is deterministic: projects are created at a fixed instant, issues
 * get ids in file order and timestamps one second apart from it, an issue's comments ids from the
 * simulator's comment sequence in file order and timestamps one millisecond apart after their issue's, so
 * two simulators seeded from one file serve identical data (and caches built from them have identical
 * commit ids). A project that already exists in the store is left
 * as it is, so restarting with `--db` and `--seed-file` keeps what clients wrote.
 */

import { readFileSync } from "node:fs";
import { isObject } from "../../core/checks.js";
import { SvcError } from "../../core/errors.js";
import type { SimStore } from "./store.js";
import { InvalidRequest, isValidSlug, parseCommentInput, parseIssueInput } from "./validate.js";

/** The instant every seeded project starts at. */
export const SEED_EPOCH = Date.parse("2026-01-01T00:00:00.000Z");

export interface SeedReport {
  readonly seeded: string[];
  readonly skipped: string[];
}

function seedError(path: string, where: string, problem: string, cause?: unknown): SvcError {
  return new SvcError("SVC_SEED_INVALID", `seed file ${path}: ${where}: ${problem}`, {
    cause,
    data: { path, where },
  });
}

interface SeedIssue {
  readonly issue: ReturnType<typeof parseIssueInput> & { title: string };
  readonly comments: { author: string; body: string }[];
}

/** One issue of the file, its comments apart (they are no issue field). */
function seedIssue(path: string, where: string, value: unknown): SeedIssue {
  const { comments, ...fields } = isObject(value) ? value : { comments: undefined };
  if (comments !== undefined && !Array.isArray(comments)) {
    throw seedError(path, `${where}.comments`, "expected an array");
  }
  const checked = <T>(at: string, check: () => T): T => {
    try {
      return check();
    } catch (error) {
      if (error instanceof InvalidRequest) throw seedError(path, at, error.message, error);
      throw error;
    }
  };
  return {
    issue: checked(
      where,
      () => parseIssueInput(isObject(value) ? fields : value, "create") as SeedIssue["issue"],
    ),
    comments: (comments ?? []).map((comment: unknown, c: number) =>
      checked(
        `${where}.comments[${c}]`,
        () => parseCommentInput(comment, "create") as { author: string; body: string },
      ),
    ),
  };
}

/** Validates the whole file before writing anything, then loads it in one transaction. */
export function loadSeed(store: SimStore, path: string): SeedReport {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw seedError(path, "file", `cannot read it as JSON (${(error as Error).message})`, error);
  }
  if (!isObject(data) || !Array.isArray(data.projects)) {
    throw seedError(path, "top level", 'expected an object {"projects": [...]}');
  }
  const projects = data.projects.map((project: unknown, p: number) => {
    const where = `projects[${p}]`;
    if (!isObject(project)) throw seedError(path, where, "expected an object");
    const { slug, name, description, issues } = project;
    if (typeof slug !== "string" || !isValidSlug(slug)) {
      throw seedError(
        path,
        `${where}.slug`,
        "expected a slug of letters, digits, '.', '_' or '-' (at most 64)",
      );
    }
    if (name !== undefined && typeof name !== "string")
      throw seedError(path, `${where}.name`, "expected a string");
    if (description !== undefined && typeof description !== "string") {
      throw seedError(path, `${where}.description`, "expected a string");
    }
    if (issues !== undefined && !Array.isArray(issues))
      throw seedError(path, `${where}.issues`, "expected an array");
    const inputs = (issues ?? []).map((issue: unknown, i: number) =>
      seedIssue(path, `${where}.issues[${i}]`, issue),
    );
    return { slug, name: name ?? slug, description: description ?? "", inputs };
  });

  const report: SeedReport = { seeded: [], skipped: [] };
  store.transaction(() => {
    for (const project of projects) {
      const createdAt = new Date(SEED_EPOCH).toISOString();
      if (!store.ensureProject(project.slug, project.name, project.description, createdAt)) {
        report.skipped.push(project.slug);
        continue;
      }
      project.inputs.forEach(({ issue, comments }, index) => {
        const millis = SEED_EPOCH + (index + 1) * 1000;
        const at = new Date(millis).toISOString();
        const { id } = store.createIssue(project.slug, issue, {
          created_at: at,
          updated_at: at,
          version: 1,
        }).frontmatter;
        comments.forEach((comment, c) => {
          const commentAt = new Date(millis + c + 1).toISOString();
          store.createComment(project.slug, id, comment, {
            created_at: commentAt,
            updated_at: commentAt,
            version: 1,
          });
        });
      });
      report.seeded.push(project.slug);
    }
  });
  return report;
}

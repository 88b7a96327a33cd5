/**
 * The wiki test space's guard (Document 3 wiki-adapter.md "Rules for test fixtures" 1 and 6): a mirror of
 * the space `SVC_WIKI_TEST_SPACE` names is refused, before any push, unless both durable fixture pages
 * (`SVC_WIKI_DURABLE_PARENT_ID`, `SVC_WIKI_DURABLE_CHILD_ID`) are in the listing and labelled
 * `svc-durable-fixture`. Read-only: one GET of each page's labels.
 */
import type { Backend } from "../../backends/backend.js";
import { createBackend } from "../../backends/create.js";
import { WikiBackend } from "../../backends/wiki/backend.js";
import { excerpt, UserFacingError } from "../../core/errors.js";
import type { RemoteUrl } from "../../core/remote-url.js";
import type { MirrorIo } from "./run-context.js";

/** The label that marks the wiki test space's durable fixture pages (Document 3 "Rules for test fixtures" 1). */
export const DURABLE_LABEL = "svc-durable-fixture";

const DURABLE_VARIABLES = ["SVC_WIKI_DURABLE_PARENT_ID", "SVC_WIKI_DURABLE_CHILD_ID"] as const;

/** Whether the wiki remote names the space `SVC_WIKI_TEST_SPACE` names: the same words, or the same space id. */
async function isWikiTestSpace(
  remote: RemoteUrl,
  backend: Backend,
  testSpace: string,
  env: NodeJS.ProcessEnv,
): Promise<boolean> {
  if (remote.project === testSpace) return true;
  if (!(backend instanceof WikiBackend)) return false;
  const other = await createBackend({ ...remote, project: testSpace }, `svc-mirror-${process.pid}`, env);
  if (!(other instanceof WikiBackend)) return false;
  try {
    return (await other.resolveSpace()) === (await backend.resolveSpace());
  } catch (error) {
    // No readable space by that name: then it is not this one (which was just listed). Refusals with a
    // status (401, 403) and other failures are reported.
    if (error instanceof UserFacingError && error.data.status === undefined) return false;
    throw error;
  }
}

/**
 * Refuses the wiki test space unless both durable fixture pages are among `paths` (the cache tip's
 * records folder) and labelled DURABLE_LABEL.
 */
export async function checkDurableFixtures(
  remote: RemoteUrl,
  backend: Backend,
  paths: ReadonlySet<string>,
  io: MirrorIo,
): Promise<void> {
  const testSpace = io.env.SVC_WIKI_TEST_SPACE;
  if (remote.kind !== "wiki" || !testSpace || !(await isWikiTestSpace(remote, backend, testSpace, io.env)))
    return;
  const where = `${remote.project} is the wiki test space (SVC_WIKI_TEST_SPACE=${testSpace})`;
  const unset = DURABLE_VARIABLES.filter((name) => !io.env[name]);
  if (unset.length > 0) {
    throw new UserFacingError(
      "SVC_USAGE",
      `${where}, and its mirror must hold the two durable fixture pages (Document 3 "Rules for test fixtures" 1), but ${unset.join(" and ")} ${unset.length === 1 ? "is" : "are"} not set; nothing was pushed. ` +
        `Export both, set to the ids of the parent and the child page labelled ${DURABLE_LABEL}, then run: ${io.rerun}`,
    );
  }
  for (const name of DURABLE_VARIABLES) await checkDurablePage(name, where, backend, paths, io);
}

/** Refuses unless the page `io.env[name]` names is among `paths` and labelled DURABLE_LABEL. */
async function checkDurablePage(
  name: (typeof DURABLE_VARIABLES)[number],
  where: string,
  backend: Backend,
  paths: ReadonlySet<string>,
  io: MirrorIo,
): Promise<void> {
  const id = io.env[name] as string;
  if (!/^[0-9]+$/.test(id)) {
    throw new UserFacingError(
      "SVC_USAGE",
      `${name}=${excerpt(id, 40)} is not a page id (digits); set it to the durable page's id, then run: ${io.rerun}`,
    );
  }
  if (!paths.has(backend.schema.fileName(id))) {
    throw new UserFacingError(
      "SVC_USAGE",
      `${where}, and its durable fixture page ${id} (${name}) is not in the listing of the space: it was deleted, trashed or moved; nothing was pushed. ` +
        `Restore it (Document 3: the durable pages are never deleted), or set ${name} to the durable page's id; then run: ${io.rerun}`,
    );
  }
  const labels = backend instanceof WikiBackend ? await backend.pageLabels(id) : [];
  if (!labels.includes(DURABLE_LABEL)) {
    throw new UserFacingError(
      "SVC_USAGE",
      `${where}, and page ${id} (${name}) is not labelled ${DURABLE_LABEL} (its labels: ${labels.length === 0 ? "none" : labels.join(", ")}); nothing was pushed. ` +
        `If it is the durable page, label it ${DURABLE_LABEL} in the wiki; else set ${name} to the durable page's id. Then run: ${io.rerun}`,
    );
  }
}

/**
 * `scripts/mirror-refresh <svc-remote-url> <mirror-git-url> [--branch main] [--dry-run]`: the launcher of the
 * mirror for those who call it by this name (and `npm run mirror-refresh -- …`). It is `svc mirror`
 * (cli/commands/mirror.ts) under its older command line: this file holds only that command line (its
 * parser, its help, the command it prints to run again); the mirror itself, its steps and its exit codes
 * (0 up to date, fast-forwarded or a dry run; 1 refused or not verified; 2 anything else) are
 * cli/mirror/refresh.ts.
 */
import { realpathSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { checkMirrorUrl, type MirrorArgs, type MirrorUsage, usageError } from "../cli/mirror/command-line.js";
import { refreshMirror } from "../cli/mirror/refresh.js";
import { MIRROR_EXIT, type MirrorIo } from "../cli/mirror/run-context.js";
import { DURABLE_LABEL } from "../cli/mirror/wiki-fixtures.js";
import { failureReport, shellWord } from "../core/errors.js";
import { SVC_VERSION } from "../core/version.js";

const USAGE = "scripts/mirror-refresh <svc-remote-url> <mirror-git-url> [--branch main] [--dry-run]";
const EXAMPLE = "scripts/mirror-refresh svc::http://127.0.0.1:7878/projects/demo /srv/git/demo-mirror.git";

export const HELP = `usage: ${USAGE}
       npm run mirror-refresh -- <svc-remote-url> <mirror-git-url> [--branch main] [--dry-run]

Overlays the records folder of an svc project (pages/ for a wiki, issues/ for the others) onto a plain git
repository and fast-forwards its branch. The mirror's other files (a README, CI files) stay as they are.
It never writes to the backend and never force-pushes.

  <svc-remote-url>  the project's svc remote as \`git remote -v\` shows it, with or without svc::, e.g.
                    svc::http://127.0.0.1:7878/projects/demo or
                    svc::https://acme.atlassian.net/wiki/projects/DOCS; credentials come from the
                    environment, as for svc (VENDOR_EMAIL and VENDOR_API_KEY for a wiki, …)
  <mirror-git-url>  any URL git can push to: a bare repository on disk, a forge, an internal host
  --branch <name>   the mirror's branch (default main); a branch that does not exist gets a first commit
  --dry-run         lists on stdout the files of the records folder that would be added (A), changed (M)
                    and removed (D), and pushes nothing; it still syncs the project's cache

Each run syncs the project's cache with a full listing (as svc sync --reconcile does, so records deleted on
the server leave the mirror), commits the records on the mirror's tip only if they changed (the same records
on the same tip give the same commit id), pushes with plain git push, then fetches the branch back and
compares every file of the records folder with the cache byte for byte. A mirror that moved since it was
read refuses the push; nothing is overwritten, and the next run builds on its new tip.

For the wiki test space (SVC_WIKI_TEST_SPACE) it refuses unless the two durable fixture pages
SVC_WIKI_DURABLE_PARENT_ID and SVC_WIKI_DURABLE_CHILD_ID are in the listing and labelled ${DURABLE_LABEL}.

Exit codes: 0 up to date or fast-forwarded, and verified (or a dry run); 1 the mirror refused the push, or
the verification found a difference; 2 bad arguments or URLs, missing credentials, an unreachable backend
or mirror, or the test space without its durable pages.

Example: ${EXAMPLE}
`;

/** How this launcher is called, for its refusals. */
const SCRIPT_USAGE: MirrorUsage = { line: USAGE, example: EXAMPLE, help: "scripts/mirror-refresh --help" };

/** The command line; `"help"` for `--help`. Throws a usage error naming what is wrong. */
export function parseMirrorArgs(argv: readonly string[]): MirrorArgs | "help" {
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions(argv);
  } catch (error) {
    throw usageError(SCRIPT_USAGE, (error as Error).message);
  }
  if (parsed.values.help) return "help";
  const [remote, mirror, ...rest] = parsed.positionals;
  if (remote === undefined || mirror === undefined)
    throw usageError(
      SCRIPT_USAGE,
      "mirror-refresh needs two arguments: the svc remote URL and the mirror's git URL",
    );
  if (rest.length > 0) throw usageError(SCRIPT_USAGE, `unexpected argument ${JSON.stringify(rest[0])}`);
  checkMirrorUrl(mirror, SCRIPT_USAGE, (clean) =>
    rerunCommand(argv.map((arg) => (arg === mirror ? clean : arg))),
  );
  return {
    remote,
    mirror,
    branch: parsed.values.branch ?? "main",
    dryRun: parsed.values["dry-run"] ?? false,
  };
}

function parseOptions(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    options: {
      branch: { type: "string" },
      "dry-run": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    allowPositionals: true,
    strict: true,
  });
}

/** The script as a user runs it: parses `argv`, refreshes, reports; resolves with the exit code. */
export async function main(
  argv: readonly string[],
  io: Partial<Omit<MirrorIo, "usage">> = {},
): Promise<number> {
  const full: MirrorIo = {
    stdout: io.stdout ?? ((text) => process.stdout.write(text)),
    stderr: io.stderr ?? ((text) => process.stderr.write(text)),
    env: io.env ?? process.env,
    rerun: io.rerun ?? rerunCommand(argv),
    usage: SCRIPT_USAGE,
  };
  try {
    const args = parseMirrorArgs(argv);
    if (args === "help") {
      full.stdout(HELP);
      return MIRROR_EXIT.ok;
    }
    return await refreshMirror(args, full);
  } catch (error) {
    full.stderr(failureReport(error, SVC_VERSION));
    return MIRROR_EXIT.broken;
  }
}

/** The shipped shim, by its absolute path, with `argv` quoted: runnable as printed from any folder. */
export function rerunCommand(argv: readonly string[]): string {
  const shim = fileURLToPath(new URL("../../scripts/mirror-refresh", import.meta.url));
  return [shim, ...argv].map(shellWord).join(" ");
}

// Run as a program (`node dist/scripts/mirror-refresh.js`, what `npm run mirror-refresh` does), not when the
// shim or a test imports it. npm runs it in the package's folder: relative paths are the caller's.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  if (process.env.npm_lifecycle_event === "mirror-refresh" && process.env.INIT_CWD)
    process.chdir(process.env.INIT_CWD);
  process.exitCode = await main(process.argv.slice(2));
}

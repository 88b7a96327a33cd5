import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { Command, Option } from "clipanion";
import { forgeConfig, forgeRemoteUrl } from "../../backends/forge/config.js";
import { trackerConfig, trackerRemoteUrl } from "../../backends/tracker/config.js";
import { wikiConfig } from "../../backends/wiki/config.js";
import type { TipRow } from "../../cache/db.js";
import { shellWord, UserFacingError } from "../../core/errors.js";
import { DEFAULT_SIM_ORIGIN, parseRemoteUrl, parseRemoteUrlLookingUp } from "../../core/remote-url.js";
import { CLONE_WITH_BLOBS_VARIABLE } from "../../core/settings.js";
import { USER_CWD_VARIABLE } from "../../git/user-command.js";
import { EXIT, SvcCommand } from "../command.js";
import { withValueName } from "../command-spec.js";

/** `sim::demo` → `svc::http://127.0.0.1:7878/projects/demo`. */
export function remoteUrlFor(spec: string, simOrigin: string): string {
  const match = /^([a-z]+)::(.+)$/.exec(spec);
  if (!match) {
    throw new UserFacingError(
      "SVC_USAGE",
      `${JSON.stringify(spec)} is not <kind>::<project>; for example: svc init sim::demo demo`,
    );
  }
  const [, kind, project = ""] = match;
  let url: string;
  if (kind === "sim") {
    url = `svc::${simOrigin.replace(/\/+$/, "")}/projects/${encodeURIComponent(project)}`;
  } else if (kind === "wiki") {
    // Checks the four variables and the tenant before anything else (Document 3).
    url = `svc::${wikiConfig().baseUrl}/wiki/projects/${encodeURIComponent(project)}`;
  } else if (kind === "forge") {
    // Checks FORGE_TOKEN and SVC_ALLOWED_ORIGINS, and the <owner>/<repo> form, before anything else.
    url = forgeRemoteUrl(forgeConfig().baseUrl, project);
  } else if (kind === "tracker") {
    // Checks the four variables, the instance and the project key before anything else.
    url = trackerRemoteUrl(trackerConfig().baseUrl, project);
  } else {
    throw new UserFacingError(
      "SVC_USAGE",
      `svc init: the ${kind} backend is not available in this version of svc; use sim::<project>, wiki::<SPACE_KEY>, tracker::<KEY> or forge::<owner>/<repo>`,
    );
  }
  parseRemoteUrl(url);
  return url;
}

/**
 * Whether the repository config file `file` already sets `pull.rebase` to false as its last word on it:
 * the helper writes it during the clone when no config of the user chose (helper/session.ts
 * `configurePull`), as git writes it (`[pull]`, then `rebase = false`). Read as text, to save a git start;
 * anything else (a missing file, another spelling, an include) is false, and `git config` then sets it.
 */
export function setsPullRebaseFalse(file: string): boolean {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return false;
  }
  let section = "";
  let value: string | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line.startsWith("[")) {
      section = line.toLowerCase();
      // [include] and [includeIf …]: another file could say otherwise.
      if (section.startsWith("[include")) return false;
      continue;
    }
    const match = /^rebase\s*=\s*(\S+)$/i.exec(line);
    if (section === "[pull]" && match) value = match[1];
  }
  return value === "false";
}

/** git 2.39's advice after a failed checkout in a clone, line by line. */
const GIT_CHECKOUT_ADVICE = new Set([
  "warning: Clone succeeded, but checkout failed.",
  "You can inspect what was checked out with 'git status'",
  "and retry with 'git restore --source=HEAD :/'",
]);

/**
 * git's stderr during the clone, passed on line by line, except git's own advice after a refusal by the
 * blob limit: its `git restore --source=HEAD :/` would run from the wrong folder and, in the sparse
 * checkout of no files the refusal leaves, restore nothing; the helper's lines just before name what to
 * run. (git shows no progress on a pipe, so whole lines are all it writes.)
 */
class CloneStderr extends Writable {
  /** Whether the helper refused the checkout by the blob limit. */
  refused = false;
  private pending = "";
  private afterAdvice = false;

  constructor(private readonly out: NodeJS.WritableStream) {
    super();
  }

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    this.pending += chunk.toString();
    const lines = this.pending.split("\n");
    this.pending = lines.pop() ?? "";
    for (const line of lines) this.pass(line, "\n");
    done();
  }

  override _final(done: () => void): void {
    if (this.pending !== "") this.pass(this.pending, "");
    done();
  }

  private pass(line: string, end: string): void {
    if (/^svc: this fetch wants \d+ record files, more than SVC_BLOB_LIMIT=/.test(line)) this.refused = true;
    const advice = this.refused && GIT_CHECKOUT_ADVICE.has(line);
    // git ends its advice with an empty line.
    const dropped = advice || (this.afterAdvice && line === "");
    this.afterAdvice = advice;
    if (!dropped) this.out.write(`${line}${end}`);
  }
}

export class InitCommand extends SvcCommand {
  static override paths = [["init"]];

  static override usage = Command.Usage({
    category: "Working with records",
    description: "Clone a project (sim::, wiki::, tracker:: or forge::) into a new git working tree",
    details: `
      Clones the project into dir (default: the project's name; it must not exist, or be empty) with one
      Markdown file per record, checks out \`main\` tracking \`origin/main\` and sets \`pull.rebase=false\`,
      so that plain \`git pull\`, \`git commit\`, \`git push\` and \`git status\` work inside it.

      The backends of this version and their forms:

        sim::<project>     a project of the issue-tracker simulator (svc sim); files
                           issues/<id>.md. The simulator is at --origin, else
                           $SVC_SIM_ORIGIN, else ${DEFAULT_SIM_ORIGIN}.
        wiki::<SPACE_KEY>  a wiki space (svc spaces --backend wiki lists them); files
                           pages/<id>.md. Needs VENDOR_API_KEY, VENDOR_EMAIL,
                           SVC_WIKI_TENANT and SVC_ALLOWED_ORIGINS.
        forge::<owner>/<repo>
                           a forge repository's issues (GitHub); files
                           issues/<number>.md, four digits at least. Needs
                           FORGE_TOKEN and SVC_ALLOWED_ORIGINS; SVC_FORGE_BASE_URL
                           replaces https://api.github.com (e.g. for GitHub
                           Enterprise: https://<host>/api/v3).
        tracker::<KEY>     a tracker project's issues (Jira Cloud); files
                           issues/<KEY>-<n>.md. Needs TRACKER_EMAIL,
                           TRACKER_API_TOKEN, SVC_TRACKER_INSTANCE and
                           SVC_ALLOWED_ORIGINS; SVC_TRACKER_BASE_URL replaces
                           https://<instance>.atlassian.net.

      The checkout is complete whatever the project's size: every record file, as with git clone of the
      same svc:: URL. SVC_BLOB_LIMIT (off by default) sets a cap: a checkout of more files than that is
      refused, with the git sparse-checkout command to run instead.

      Each record's comments are files too, comments/<record file name without .md>/<comment id>.md (the
      simulator's; other backends as their docs say); --no-comments clones without them (it sets git config
      svc.comments false in the clone, which a clone made without the option can set later).

      --at <time> checks out the state this machine's cache held at that time (the last sync or push before
      it; svc log lists them) instead of the server's current one. It is what this machine saw, not the
      server's own history, and the working tree is read-only: git push there is refused.
    `,
    examples: [
      ["Clone project demo of the simulator into the folder demo", "svc init sim::demo demo"],
      ["The same from a simulator on another port", "svc init sim::demo demo --origin http://127.0.0.1:9000"],
      ["Clone the wiki space DOCS into the folder docs", "svc init wiki::DOCS docs"],
      ["Clone the issues of the forge repository acme/widgets", "svc init forge::acme/widgets widgets"],
      ["Clone the tracker project TEST into the folder test", "svc init tracker::TEST test"],
      [
        "The project demo as this machine's cache saw it at noon UTC on 22 November 2026",
        "svc init sim::demo demo-then --at 2026-11-22T12:00Z",
      ],
    ],
  });

  spec = Option.String({ name: "kind::project" });
  dir = Option.String({ name: "dir", required: false });
  at = withValueName(
    "time",
    Option.String("--at", {
      description:
        "Check out the project as this machine's cache saw it at that time (read-only; see svc log --help for the forms)",
    }),
  );
  noComments = Option.Boolean("--no-comments", false, {
    description: "Clone without the records' comments (sets git config svc.comments false)",
  });
  origin = withValueName(
    "url",
    Option.String("--origin", {
      description: `Where the simulator runs, for sim:: (default $SVC_SIM_ORIGIN, else ${DEFAULT_SIM_ORIGIN})`,
    }),
  );

  async run(): Promise<number> {
    const simOrigin = this.origin ?? process.env.SVC_SIM_ORIGIN ?? DEFAULT_SIM_ORIGIN;
    // forge::acme/widgets clones into widgets, as git clone of a repository URL does.
    const dir = this.dir ?? this.spec.split("::")[1]?.split("/").pop() ?? "";
    let url: string;
    try {
      url = remoteUrlFor(this.spec, simOrigin);
    } catch (error) {
      if (!(error instanceof UserFacingError) || error.data.simHost === undefined) throw error;
      throw await this.simOriginRefusal(simOrigin, (origin) => this.again(dir, origin));
    }
    if (existsSync(dir) && readdirSync(dir).length > 0) {
      const suggestion = `${this.again(`${dir}-2`)}${this.at === undefined ? "" : ` --at ${shellWord(this.at)}`}`;
      throw new UserFacingError(
        "SVC_USAGE",
        `${dir} exists and is not empty; pick a new folder, e.g. ${suggestion}`,
      );
    }
    // Which state --at shows is settled before anything is cloned: a time the cache never saw is refused.
    // A clone without comments reads the cache of its own that its fetches use (cache/open.ts).
    const history = this.at === undefined ? undefined : await import("../history.js");
    const past =
      history === undefined || this.at === undefined
        ? undefined
        : history.stateOfCacheAt(
            parseRemoteUrl(url),
            this.at,
            this.again(dir),
            this.noComments || !(await history.commentsOn(undefined)),
          );
    const { helperEnvironment, ownBinDir } = await import("../helper-path.js");
    const { env, helperOnPath } = helperEnvironment();
    const cloned = await this.clone(url, dir, env, past !== undefined);
    if (cloned !== EXIT.ok) return cloned;
    if (past) return this.checkOutPast(url, dir, env, past);
    if (!helperOnPath) {
      this.context.stderr.write(
        `svc: note: git-remote-svc is not on your PATH; add ${ownBinDir()} to PATH so that git pull and git push find it\n`,
      );
    }
    this.context.stderr.write(
      `svc: ${dir} is a working tree of ${url.slice(5)}; edit files, commit, git push\n`,
    );
    return EXIT.ok;
  }

  /** This command again, into `folder` (and with `--origin origin`), for the messages. */
  private again(folder: string, origin = this.origin): string {
    return [
      "svc",
      "init",
      this.spec,
      folder,
      ...(origin ? ["--origin", origin] : []),
      ...(this.noComments ? ["--no-comments"] : []),
    ]
      .map(shellWord)
      .join(" ");
  }

  /**
   * `git clone` of `url` into `dir` (`past`: without a checkout, which `checkOutPast` makes), with
   * `pull.rebase=false` set; EXIT.ok, or the exit code after saying what failed.
   */
  private async clone(url: string, dir: string, env: NodeJS.ProcessEnv, past: boolean): Promise<number> {
    const { userGit } = await import("../../git/user-git.js");
    const stderr = new CloneStderr(this.context.stderr);
    const clone = await userGit(
      [
        "clone",
        "--filter=blob:none",
        ...(past ? ["--no-checkout"] : []),
        // Set in the new repository before its first fetch, where the helper reads it.
        ...(this.noComments ? ["--config", "svc.comments=false"] : []),
        "--origin",
        "origin",
        url,
        dir,
      ],
      {
        // The checkout wants every record file: the helper sends them with the clone's own fetch when the
        // blob limit allows, instead of git starting it again for them (stateless-connect.ts); not for --at,
        // whose checkout is an older state. The commands it prints `cd` from the user's folder.
        env: {
          ...env,
          ...(past ? {} : { [CLONE_WITH_BLOBS_VARIABLE]: "1" }),
          [USER_CWD_VARIABLE]: process.cwd(),
        },
        stream: stderr,
      },
    );
    await new Promise<void>((resolve) => stderr.end(resolve));
    const cloned = existsSync(join(dir, ".git"));
    if (cloned) {
      // git 2.27+ refuses to pull divergent branches without a choice; merging is the flow svc is built on
      // (a conflicting record becomes conflict markers in its file). Set even when the checkout failed
      // (the blob limit): the clone is there and the user finishes it with a sparse checkout.
      if (!setsPullRebaseFalse(join(dir, ".git", "config")))
        await userGit(["config", "pull.rebase", "false"], { cwd: dir, stream: this.context.stderr });
    }
    if (clone.code !== 0 && cloned && stderr.refused) {
      this.context.stderr.write(
        `svc: the clone in ${dir} is made, but its checkout was refused by SVC_BLOB_LIMIT; run one of the two commands above\n`,
      );
      return EXIT.broken;
    }
    if (clone.code !== 0) {
      this.context.stderr.write(
        cloned
          ? `svc: the clone in ${dir} is made but its checkout failed (exit ${clone.code}); the lines above say why and what to run\n`
          : `svc: git clone of ${url} failed (exit ${clone.code}); the lines above say why\n`,
      );
      return EXIT.broken;
    }
    return EXIT.ok;
  }

  /**
   * Checks out, in the clone `dir`, the state `past` of the cache (`--at`) and marks the clone read-only
   * (`svc.at`). The state is an ancestor of the server's main the clone fetched (every move of the cache's
   * main builds on the one before); its files come in one lazy batch.
   */
  private async checkOutPast(
    url: string,
    dir: string,
    env: NodeJS.ProcessEnv,
    past: { tip: TipRow; atMs: number },
  ): Promise<number> {
    const { userGit } = await import("../../git/user-git.js");
    const { commit_oid: state, at_ms: seenMs } = past.tip;
    const steps: (readonly string[])[] = [
      ["reset", "--quiet", "--hard", state],
      ["config", "svc.at", new Date(past.atMs).toISOString()],
    ];
    for (const args of steps) {
      const step = await userGit(args, { cwd: dir, env, stream: this.context.stderr });
      if (step.code !== 0) {
        this.context.stderr.write(
          `svc: the clone in ${dir} is made, but git ${args.join(" ")} there failed (exit ${step.code}); the lines above say why. Remove it and run the command again: rm -rf ${shellWord(dir)} && ${this.again(dir)} --at ${shellWord(this.at ?? "")}\n`,
        );
        return EXIT.broken;
      }
    }
    this.context.stderr.write(
      `svc: ${dir} shows ${url.slice(5)} as this machine's cache saw it at ${new Date(past.atMs).toISOString()} ` +
        `(state ${state.slice(0, 12)}, seen ${new Date(seenMs).toISOString()}); it is read-only: git push there is refused. ` +
        `What changed since: svc log ${shellWord(dir)} --since ${new Date(seenMs).toISOString()}\n`,
    );
    return EXIT.ok;
  }

  /**
   * The refusal of a simulator origin that is not loopback (core/remote-url.ts says why: loopback-only by
   * design, or a host name that does not resolve), with this command at 127.0.0.1 on the same port.
   */
  private async simOriginRefusal(origin: string, withOrigin: (origin: string) => string): Promise<Error> {
    let refusal: unknown;
    try {
      await parseRemoteUrlLookingUp(`svc::${origin.replace(/\/+$/, "")}/projects/x`);
    } catch (error) {
      refusal = error;
    }
    const data = refusal instanceof UserFacingError ? refusal.data : {};
    if (typeof data.cause !== "string" || typeof data.loopbackUrl !== "string") return refusal as Error;
    const where = this.origin === undefined ? "SVC_SIM_ORIGIN" : "--origin";
    return new UserFacingError(
      "SVC_USAGE",
      `${where} ${origin} puts the simulator on ${data.cause}. For a simulator on this machine: ${withOrigin(new URL(data.loopbackUrl.slice(5)).origin)}`,
    );
  }
}

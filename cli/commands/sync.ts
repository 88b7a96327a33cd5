import { Command, Option } from "clipanion";
import { EXIT, SvcCommand } from "../command.js";
import { withValueName } from "../command-spec.js";

export class SyncCommand extends SvcCommand {
  static override paths = [["sync"]];

  static override usage = Command.Usage({
    category: "Working with records",
    description: "Bring a clone's cache up to date with the server, then git fetch",
    details: `
      Asks the backend for the records changed since the last sync (a delta sync), updates the project's
      cache and runs \`git fetch\` in the working tree, so \`origin/main\` shows the server's state;
      \`git pull\` then brings it into your files. \`--reconcile\` lists every record, which also finds
      records deleted on the server.
    `,
    examples: [
      ["Sync the working tree in the current folder", "svc sync"],
      ["Also find records deleted on the server", "svc sync --reconcile demo"],
    ],
  });

  dir = Option.String({ name: "dir", required: false });
  reconcile = Option.Boolean("--reconcile", false, { description: "Full listing; finds deleted records" });
  remote = withValueName(
    "remote",
    Option.String("--remote", "origin", { description: "The git remote to sync (default origin)" }),
  );

  async run(): Promise<number> {
    const [
      { helperEnvironment },
      { userGit, userRepository },
      { createBackend },
      { openProjectCache },
      { syncCache, DEFAULT_RECONCILE_INTERVAL_MS },
      { svcRemoteOf },
      { readDurationMs, readFlag },
    ] = await Promise.all([
      import("../helper-path.js"),
      import("../../git/user-git.js"),
      import("../../backends/create.js"),
      import("../../cache/open.js"),
      import("../../cache/sync.js"),
      import("../working-tree.js"),
      import("../../core/settings.js"),
    ]);
    const dir = this.dir ?? ".";
    const remote = await svcRemoteOf(dir, this.remote, "svc sync");
    const agent = `svc-${process.pid}`;
    const log = (message: string) => this.context.stderr.write(`${message}\n`);
    // A full listing (deletions found) when the last one is older than the clone's svc.reconcileInterval,
    // as a fetch does; `--reconcile` makes one now.
    const interval = await userGit(["config", "--get", "svc.reconcileInterval"], { cwd: dir });
    const reconcileIntervalMs = readDurationMs(
      "git config svc.reconcileInterval",
      interval.code === 0 ? interval.stdout.trim() : undefined,
      { unit: "s", fallbackMs: DEFAULT_RECONCILE_INTERVAL_MS },
    );
    // The cache a fetch of this clone uses: one without comments where `svc.comments` is false.
    const commentsSetting = await userGit(["config", "--get", "svc.comments"], { cwd: dir });
    const comments = readFlag(
      "git config svc.comments",
      commentsSetting.code === 0 ? commentsSetting.stdout.trim() : undefined,
      true,
    );
    const backend = await createBackend(remote, agent, process.env, { comments });
    // A cache that is absent or broken is built from a full listing here: that is this command's sync.
    const { cache, built } = await openProjectCache({
      remote,
      agent,
      backend,
      withoutComments: !comments,
      // The last server commit: git's remote-tracking ref, else the helper's private one.
      user: userRepository([`refs/remotes/${this.remote}/main`, `refs/svc/${this.remote}/main`], dir),
      log,
    });
    try {
      const result =
        built ?? (await syncCache(cache, backend, { reconcile: this.reconcile, reconcileIntervalMs }));
      if (result.commit) await cache.consolidateIfDue(log);
      this.context.stderr.write(
        `svc: ${result.full ? "full" : "delta"} sync: ${result.changed} changed, ${result.deleted} removed` +
          `${result.commit ? ` (cache commit ${result.commit.slice(0, 12)})` : ", nothing new"}\n`,
      );
    } finally {
      cache.close();
    }
    const fetch = await userGit(["fetch", this.remote], {
      cwd: dir,
      env: helperEnvironment().env,
      stream: this.context.stderr,
    });
    if (fetch.code !== 0) {
      this.context.stderr.write(
        `svc: git fetch ${this.remote} failed (exit ${fetch.code}); the lines above say why\n`,
      );
      return EXIT.broken;
    }
    return EXIT.ok;
  }
}

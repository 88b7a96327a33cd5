/**
 * The working tree's own settings that svc's flow depends on: a sparse checkout whose patterns select record
 * files (git itself matches them: `git ls-files -i -x <pattern>` applies the same rules as the sparse
 * checkout), and a pull that merges (svc init sets `pull.rebase=false`; a rebase or `pull.ff=only` breaks
 * the documented `git pull --no-rebase --no-edit && git push` after a rejected push).
 */
import { sparseSetWords, userGit } from "../../git/user-git.js";
import { gitIn, type Place } from "./place.js";
import { type Finding, fail, ok } from "./report.js";

async function gitLines(place: Place, args: readonly string[]): Promise<string[] | undefined> {
  const result = await userGit(args, { cwd: place.dir ?? "." });
  if (result.code !== 0) return undefined;
  return result.stdout.split("\n").filter((line) => line !== "");
}

/** Whether `pattern` (non-cone, gitignore syntax) selects any file of the index, by git's own matching. */
async function selectsAFile(place: Place, pattern: string): Promise<boolean> {
  const files = await gitLines(place, ["ls-files", "--cached", "--ignored", "--exclude", pattern]);
  return (files ?? []).length > 0;
}

/** Patterns (non-cone) or folders (cone) of the sparse checkout that match no file; their fix. */
export async function checkSparseCheckout(place: Place): Promise<Finding> {
  const enabled = (await gitLines(place, ["config", "--type=bool", "--get", "core.sparseCheckout"]))?.[0];
  if (enabled !== "true")
    return ok("sparse-checkout", "no sparse checkout: every record file is checked out");
  const cone =
    (await gitLines(place, ["config", "--type=bool", "--get", "core.sparseCheckoutCone"]))?.[0] === "true";
  const listed = (await gitLines(place, ["sparse-checkout", "list"])) ?? [];
  let dead: string[];
  if (cone) {
    const files = (await gitLines(place, ["ls-files", "--cached"])) ?? [];
    dead = listed.filter((folder) => !files.some((file) => file.startsWith(`${folder}/`)));
  } else {
    // Negations and comments select nothing by themselves; they stay as they are.
    const positive = listed.filter(
      (line) => !line.startsWith("!") && !line.startsWith("#") && line.trim() !== "",
    );
    dead = [];
    for (const pattern of positive) if (!(await selectsAFile(place, pattern))) dead.push(pattern);
  }
  if (dead.length === 0) {
    return ok(
      "sparse-checkout",
      `${listed.length} ${cone ? "folders" : "patterns"}, each matching record files`,
      {
        patterns: listed,
        cone,
      },
    );
  }
  const kept = listed.filter((line) => !dead.includes(line));
  const selecting = kept.filter((line) => !line.startsWith("!") && !line.startsWith("#"));
  const fix =
    selecting.length === 0
      ? gitIn(place, ["sparse-checkout", "disable"])
      : gitIn(place, [...(await sparseSetWords(cone ? "cone" : "no-cone")), ...kept]);
  return fail(
    "sparse-checkout",
    `${dead.length === 1 ? "this sparse-checkout pattern matches" : "these sparse-checkout patterns match"} no record file: ${dead.join(", ")}` +
      (selecting.length === 0
        ? "; no pattern is left, so the fix checks out every file"
        : "; the fix keeps the others"),
    fix,
    { patterns: listed, unmatched: dead, cone },
  );
}

/** The value git uses for `key` and the level that set it (`local`, `global`, `command`, …), if set. */
async function setting(place: Place, key: string): Promise<{ scope: string; value: string } | undefined> {
  const line = (await gitLines(place, ["config", "--show-scope", "--get", key]))?.[0];
  if (line === undefined) return undefined;
  const tab = line.indexOf("\t");
  return { scope: line.slice(0, tab), value: line.slice(tab + 1) };
}

/** `git config <key> <value>` in the working tree's own config, replacing every value it has there. */
async function setLocally(place: Place, key: string, value: string): Promise<string> {
  const values = (await gitLines(place, ["config", "--local", "--get-all", key])) ?? [];
  return gitIn(place, ["config", ...(values.length > 1 ? ["--replace-all"] : []), key, value]);
}

/**
 * `pull.rebase` false (or unset with a `pull.ff` other than only) and `pull.ff` not `only`. The fix sets the
 * working tree's own value, which wins over a global or system one and changes no other repository.
 */
export async function checkPullConfig(place: Place): Promise<Finding> {
  const rebase = await setting(place, "pull.rebase");
  const ff = await setting(place, "pull.ff");
  const fromEnvironment =
    "it is set in the environment (GIT_CONFIG_PARAMETERS or GIT_CONFIG_COUNT), which no config file overrides; unset those variables";
  if (rebase && !/^(false|no|off|0|)$/i.test(rebase.value.trim())) {
    const message = `pull.rebase is ${rebase.value} (${rebase.scope} config): git pull would rebase your commits; svc's flow merges`;
    return rebase.scope === "command"
      ? fail("pull-config", message, { advice: fromEnvironment })
      : fail("pull-config", message, await setLocally(place, "pull.rebase", "false"), rebase);
  }
  if (ff && ff.value.trim().toLowerCase() === "only") {
    const message = `pull.ff is only (${ff.scope} config): git pull refuses to merge a record changed on both sides; svc's flow merges`;
    return ff.scope === "command"
      ? fail("pull-config", message, { advice: fromEnvironment })
      : fail("pull-config", message, await setLocally(place, "pull.ff", "true"), ff);
  }
  if (!rebase && !ff) {
    return fail(
      "pull-config",
      "neither pull.rebase nor pull.ff is set: git pull stops on divergent branches; svc init sets pull.rebase=false",
      await setLocally(place, "pull.rebase", "false"),
    );
  }
  return ok(
    "pull-config",
    rebase ? `pull.rebase=${rebase.value} (${rebase.scope})` : `pull.ff=${ff?.value} (${ff?.scope})`,
  );
}

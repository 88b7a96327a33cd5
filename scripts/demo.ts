/**
 * `npm run demo`: an ephemeral simulator seeded with fixtures/demo-seed.json, then the read path as a user
 * walks it: `svc init`, `ls`, `cat`, `grep`, a change made on the server, `git pull`, then an edit that
 * `git push` turns into a PATCH, then a comment round trip: a new file under `comments/0001/` that
 * `git push` posts and `git pull` brings back as `<id>.md`. Each command is
 * printed before it runs, exactly as it runs (a shell line runs with `sh -c`). Everything happens in a temporary folder with its own git configuration, and the
 * simulator is stopped at the end.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { shellWord } from "../core/errors.js";
import { spawnListening } from "./children.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BIN = join(ROOT, "bin");
const out = (text: string) => process.stdout.write(text);

function show(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  line?: string,
): Promise<void> {
  const shown = command === process.execPath ? ["svc", ...args.slice(1)] : [command, ...args];
  out(`\n$ ${line ?? shown.map(shellWord).join(" ")}\n`);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, cwd, stdio: ["ignore", "inherit", "inherit"] });
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} ${args.join(" ")} exited with ${code}`)),
    );
  });
}

async function main(): Promise<number> {
  const root = mkdtempSync(join(tmpdir(), "svc-demo-"));
  const home = join(root, "home");
  mkdirSync(home);
  writeFileSync(join(home, ".gitconfig"), "[user]\n\tname = Demo\n\temail = demo@localhost\n");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${BIN}${delimiter}${process.env.PATH ?? ""}`,
    HOME: home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: join(home, ".gitconfig"), // gits before 2.32 read $HOME/.gitconfig
    SVC_CACHE_DIR: join(root, "cache"),
  };
  const sim = await spawnListening(
    [
      join(BIN, "svc"),
      "sim",
      "--ephemeral",
      "--bind",
      "127.0.0.1:0",
      "--seed-file",
      join(ROOT, "fixtures", "demo-seed.json"),
    ],
    /svc-sim listening on (\S+)/,
    15_000,
  );
  try {
    out(`svc demo: a simulator with the demo project is listening on ${sim.url}; working in ${root}\n`);
    await show(
      process.execPath,
      [join(BIN, "svc"), "init", "sim::demo", "demo", "--origin", sim.url],
      env,
      root,
    );
    const files = readdirSync(join(root, "demo", "issues")).map((name) => `issues/${name}`);
    await show("ls", ["issues"], env, join(root, "demo"));
    await show("cat", ["issues/0001.md"], env, join(root, "demo"));
    await show("grep", ["-l", "status: open", ...files], env, join(root, "demo"));
    const body = JSON.stringify({ status: "done", labels: ["bug", "auth", "fixed"] });
    out(
      `\n$ curl -X PATCH -H 'Content-Type: application/json' -d '${body}' ${sim.url}/projects/demo/issues/1\n`,
    );
    const response = await fetch(`${sim.url}/projects/demo/issues/1`, {
      method: "PATCH",
      headers: { "content-type": "application/json", "x-svc-agent": "svc-demo" },
      body,
    });
    out(`${response.status} ${await response.text()}\n`);
    await show("git", ["pull"], env, join(root, "demo"));
    await show("git", ["log", "--oneline"], env, join(root, "demo"));
    await show("cat", ["issues/0001.md"], env, join(root, "demo"));
    const demo = join(root, "demo");
    await show("sed", ["-i", "s/^status: in_progress/status: in_review/", "issues/0002.md"], env, demo);
    await show("git", ["commit", "-qam", "CSV export is ready for review"], env, demo);
    await show("git", ["push"], env, demo);
    out(`\n$ curl ${sim.url}/projects/demo/issues/2\n`);
    const after = await fetch(`${sim.url}/projects/demo/issues/2`, {
      headers: { "x-svc-agent": "svc-demo" },
    });
    out(`${after.status} ${await after.text()}\n`);
    await commentRoundTrip(env, demo);
    out("\nsvc demo: done; the simulator is stopped and the temporary folder removed\n");
    return 0;
  } finally {
    await sim.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * A comment as a new file (the text alone will do): `git push` posts it, `git pull` brings it back named by
 * the id the server gave it, with the server's frontmatter.
 */
async function commentRoundTrip(env: NodeJS.ProcessEnv, demo: string): Promise<void> {
  await show("ls", ["comments/0001"], env, demo);
  const line = "printf 'Confirmed: a password with a colon fails the same way.\\n' > comments/0001/reply.md";
  await show("sh", ["-c", line], env, demo, line);
  await show("git", ["add", "comments/0001/reply.md"], env, demo);
  await show("git", ["commit", "-qm", "Reply on the login bug"], env, demo);
  await show("git", ["push"], env, demo);
  await show("git", ["pull"], env, demo);
  await show("ls", ["comments/0001"], env, demo);
  const newest =
    readdirSync(join(demo, "comments", "0001"))
      .sort()
      .at(-1) ?? "";
  await show("cat", [`comments/0001/${newest}`], env, demo);
}

process.exitCode = await main().catch((error: Error) => {
  process.stderr.write(`svc demo failed: ${error.message}\n`);
  return 1;
});

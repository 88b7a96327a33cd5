/** core/process.ts: a live process, a zombie and a reaped one, made with real child processes. */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import test from "ava";
import { isRunning } from "./process.js";

test("this process runs; a pid that was never used does not", (t) => {
  t.true(isRunning(process.pid));
  t.false(isRunning(2 ** 22 + 12_345));
});

test("a child runs until it exits and is reaped", async (t) => {
  const child = spawn("sleep", ["30"], { stdio: "ignore" });
  t.teardown(() => child.kill("SIGKILL"));
  await once(child, "spawn");
  t.true(isRunning(child.pid as number));
  child.kill("SIGKILL");
  await once(child, "exit");
  t.false(isRunning(child.pid as number));
});

test("a zombie (exited, not yet reaped) does not run", async (t) => {
  // The shell forks `true` and becomes `sleep`, which never waits for it: `true` stays a zombie while
  // `sleep` lives. (Anything the shell ran in between could reap it, so its pid comes from /proc.)
  const parent = spawn("sh", ["-c", "true & exec sleep 30"], { stdio: "ignore" });
  t.teardown(() => parent.kill("SIGKILL"));
  await once(parent, "spawn");
  const children = `/proc/${parent.pid}/task/${parent.pid}/children`;
  const stateOf = (pid: string) => /^\d+ \(.*\) (\S)/s.exec(readFileSync(`/proc/${pid}/stat`, "utf8"))?.[1];
  // Wait for the kernel to show the zombie (ava's timeout bounds the wait), then ask.
  let zombie: string | undefined;
  while (zombie === undefined) {
    if (!existsSync(children)) {
      t.pass("no /proc/<pid>/task/<pid>/children here: the zombie cannot be found");
      return;
    }
    zombie = readFileSync(children, "utf8")
      .trim()
      .split(" ")
      .find((pid) => pid !== "" && stateOf(pid) === "Z");
    if (zombie === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.false(isRunning(Number(zombie)));
  t.true(isRunning(parent.pid as number));
});

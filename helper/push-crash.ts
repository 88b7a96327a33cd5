/**
 * Test-only crash points of a push: where the e2e suites kill a push as `kill -9` would, to prove that the
 * next plain `git push` finishes it and the server gets every change exactly once (e2e/exactly-once.test.ts,
 * e2e/killed-push.test.ts). Unset variables cost one comparison per point; nothing here runs otherwise.
 *
 * `SVC_TEST_KILL_AT=<step>` or `<step>#<n>`: SIGKILL of the whole process group (git push, this helper and
 * its children) the n-th time this push reaches `<step>` (`<step>` alone is `<step>#1`); just before, one
 * line `svc: test crash point <step>#<n>` on stderr says where, so a test can assert the kill happened there.
 * A value that is no step of CRASH_STEPS, or a count that is not a whole number from 1, throws (a typo in a
 * test must not pass as "not reached"). The steps, in the order a push reaches them:
 * - `copy`: the in-process copy of the user's commits stored its first object, or the `git push` that
 *   copies them instead (too many objects, or ones it leaves to git) has stored them and the incoming ref;
 *   reached only by a push that has objects to copy;
 * - `planned`: the plan is made, nothing written;
 * - `after-create`, `after-update`, `after-delete`: a write of that kind answered by the server and noted in
 *   the cache (`#n`: the n-th of that kind this push made; writes go creates, updates, deletes);
 * - `result`: every write done, before the result commit;
 * - `noted`: the result commit noted as the push's (`pushes`), main not moved yet;
 * - `moved`: main's ref file moved, its transaction not committed;
 * - `done`: before git hears `ok`.
 * `SVC_TEST_DIE_AFTER_WRITES=<n>` kills this process alone (not git) after n writes.
 */

import { writeSync } from "node:fs";

export const CRASH_STEPS = [
  "copy",
  "planned",
  "after-create",
  "after-update",
  "after-delete",
  "result",
  "noted",
  "moved",
  "done",
] as const;

export type CrashStep = (typeof CRASH_STEPS)[number];

/** How often this process reached each step. */
const reached = new Map<CrashStep, number>();

/** `SVC_TEST_KILL_AT` read: the step and the count at which to kill; undefined when unset. */
function killAt(): { step: CrashStep; count: number } | undefined {
  const value = process.env.SVC_TEST_KILL_AT;
  if (value === undefined || value === "") return undefined;
  const match = /^([a-z-]+)(?:#([1-9]\d*))?$/.exec(value);
  const step = CRASH_STEPS.find((known) => known === match?.[1]);
  if (!match || !step)
    throw new Error(
      `SVC_TEST_KILL_AT=${value} is not <step> or <step>#<n> with a step of ${CRASH_STEPS.join(", ")} and n from 1`,
    );
  return { step, count: Number(match[2] ?? 1) };
}

/** Kills the push's process group if `SVC_TEST_KILL_AT` names this step and this is its count. */
export function crashPoint(step: CrashStep): void {
  const target = killAt();
  if (target === undefined) return;
  const count = (reached.get(step) ?? 0) + 1;
  reached.set(step, count);
  if (target.step !== step || target.count !== count) return;
  writeSync(2, `svc: test crash point ${step}#${count}\n`);
  process.kill(0, "SIGKILL");
}

/** `SVC_TEST_DIE_AFTER_WRITES`: kills this process alone once `written` writes are done. */
export function dieAfterWrites(written: number): void {
  const value = Number(process.env.SVC_TEST_DIE_AFTER_WRITES);
  if (Number.isSafeInteger(value) && value > 0 && written >= value) process.kill(process.pid, "SIGKILL");
}

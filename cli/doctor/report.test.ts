/**
 * The two renderings of svc doctor's findings (cli/doctor/report.ts): exact text lines, the JSON shape
 * agents read, and the verdict.
 */
import test from "ava";
import {
  CHECKS,
  type Finding,
  fail,
  info,
  isHealthy,
  ok,
  renderJson,
  renderText,
  skipped,
} from "./report.js";

const FINDINGS: readonly Finding[] = [
  ok("git-version", "git version 2.39.5", { version: "2.39.5" }),
  fail("cache", "the cache /c is broken: its tip commit 0123456789ab is missing from repo.git", "svc sync d"),
  fail("git-version", "git version 2.20.1 is too old", { advice: "install git 2.30 or newer" }),
  skipped("server", "--offline: no request sent"),
  info("records", "3 records in the cache", { records: 3 }),
];

test("text: one line per check, each FAIL followed by its fix, the number of problems last", (t) => {
  t.is(
    renderText(FINDINGS),
    `ok      git-version: git version 2.39.5
FAIL    cache: the cache /c is broken: its tip commit 0123456789ab is missing from repo.git
  fix: svc sync d
FAIL    git-version: git version 2.20.1 is too old
  fix: none to print; install git 2.30 or newer
skipped server: --offline: no request sent
info    records: 3 records in the cache
svc doctor: 2 problems
`,
  );
  t.is(
    renderText([FINDINGS[0] as Finding, FINDINGS[1] as Finding])
      .split("\n")
      .at(-2),
    "svc doctor: 1 problem",
  );
  t.is(
    renderText([FINDINGS[0] as Finding])
      .split("\n")
      .at(-2),
    "svc doctor: healthy",
  );
});

test("JSON: healthy and one object per check with id, status, message, fix, advice and the details", (t) => {
  t.deepEqual(JSON.parse(renderJson(FINDINGS)), {
    healthy: false,
    checks: [
      { id: "git-version", status: "ok", message: "git version 2.39.5", fix: null, version: "2.39.5" },
      {
        id: "cache",
        status: "fail",
        message: "the cache /c is broken: its tip commit 0123456789ab is missing from repo.git",
        fix: "svc sync d",
      },
      {
        id: "git-version",
        status: "fail",
        message: "git version 2.20.1 is too old",
        fix: null,
        advice: "install git 2.30 or newer",
      },
      { id: "server", status: "skipped", message: "--offline: no request sent", fix: null },
      { id: "records", status: "info", message: "3 records in the cache", fix: null, records: 3 },
    ],
  });
  t.true(renderJson(FINDINGS).endsWith("}\n"));
  t.is(renderJson(FINDINGS).split("\n").length, 2, "one line");
});

test("details never replace the fields every check has", (t) => {
  const [check] = JSON.parse(
    renderJson([fail("server", "m", "f", { status: 401, id: "x", httpStatus: 401 })]),
  ).checks;
  t.deepEqual(check, { id: "server", status: "fail", message: "m", fix: "f", httpStatus: 401 });
});

test("healthy: no failure; skipped and info are not failures", (t) => {
  t.true(isHealthy([ok("helper", "x"), skipped("server", "y"), info("cache-size", "z")]));
  t.false(isHealthy([ok("helper", "x"), fail("helper", "y", "z")]));
  t.true(isHealthy([]));
});

test("every check id is listed once", (t) => {
  const ids = CHECKS.map(([id]) => id);
  t.is(new Set(ids).size, ids.length);
});

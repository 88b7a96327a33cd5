/**
 * Fix commands as printed (cli/doctor/place.ts): the folder and remote as the user named them, every word
 * quoted for a POSIX shell; the PATH line checked by running it in `sh`.
 */
import { execFileSync } from "node:child_process";
import test from "ava";
import { exportCommand, gitIn, prependToPath, svcDoctor, svcSync } from "./place.js";

test("git -C <dir> when a folder was named, plain git in the current one; words quoted", (t) => {
  t.is(gitIn({ dir: "d", remote: "origin" }, ["config", "pull.ff", "true"]), "git -C d config pull.ff true");
  t.is(gitIn({ dir: undefined, remote: "origin" }, ["config", "pull.ff", "true"]), "git config pull.ff true");
  t.is(
    gitIn({ dir: "my clone", remote: "origin" }, ["sparse-checkout", "set", "--no-cone", "issues/12*"]),
    `git -C "my clone" sparse-checkout set --no-cone 'issues/12*'`,
  );
});

test("svc sync with the folder and a remote other than origin", (t) => {
  t.is(svcSync({ dir: "d", remote: "origin" }), "svc sync d");
  t.is(svcSync({ dir: undefined, remote: "origin" }), "svc sync");
  t.is(svcSync({ dir: "it's", remote: "upstream" }), `svc sync "it's" --remote upstream`);
});

test("export: every value quoted as the shell needs it", (t) => {
  t.is(
    exportCommand([["SVC_ALLOWED_ORIGINS", "http://127.0.0.1:*,http://127.0.0.1:5000"]]),
    "export SVC_ALLOWED_ORIGINS='http://127.0.0.1:*,http://127.0.0.1:5000'",
  );
  t.is(exportCommand([["SVC_WIKI_TENANT", "acme"]]), "export SVC_WIKI_TENANT=acme");
});

test("svc doctor again: the folder and the remote as the user named them", (t) => {
  t.is(svcDoctor({ dir: undefined, remote: "origin" }), "svc doctor");
  t.is(svcDoctor({ dir: "my tree", remote: "upstream" }), 'svc doctor "my tree" --remote upstream');
});

test("PATH: the folder first, as given, whatever it holds; the old PATH after it", (t) => {
  for (const dir of ["/opt/svc/bin", '/tmp/a b/$HOME/`x`/"q"/back\\slash']) {
    const printed = execFileSync("sh", ["-c", `${prependToPath(dir)} && printf %s "$PATH"`], {
      env: { PATH: "/usr/bin:/bin", HOME: "/home/x" },
      encoding: "utf8",
    });
    t.is(printed, `${dir}:/usr/bin:/bin`);
  }
});

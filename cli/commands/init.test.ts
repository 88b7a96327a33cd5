import { writeFileSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import { givenTempDir } from "../../testing/sim.js";
import { setsPullRebaseFalse } from "./init.js";

test("setsPullRebaseFalse reads git's own spelling and the last word; anything it cannot be sure of is false", (t) => {
  const dir = givenTempDir(t, "svc-init-config-");
  const config = (text: string) => {
    const file = join(dir, `config-${Math.random()}`);
    writeFileSync(file, text);
    return setsPullRebaseFalse(file);
  };
  const core = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n";
  t.true(config(`${core}[pull]\n\trebase = false\n`));
  t.true(config(`${core}[Pull]\n\tRebase=false\n[remote "origin"]\n\turl = svc::x\n`));
  t.false(config(core), "not set");
  t.false(config(`${core}[pull]\n\trebase = true\n`));
  t.false(config(`${core}[pull]\n\trebase = false\n[pull]\n\trebase = merges\n`), "the last word wins");
  t.false(config(`${core}[branch "main"]\n\trebase = false\n`), "another section's rebase");
  t.false(
    config(`${core}[pull]\n\trebase = false\n[include]\n\tpath = other\n`),
    "an include could change it",
  );
  t.false(setsPullRebaseFalse(join(dir, "missing")));
});

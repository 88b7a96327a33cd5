import { readFileSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import { repoRoot } from "../testing/paths.js";
import { SVC_VERSION } from "./version.js";

test("SVC_VERSION is package.json's version", (t) => {
  const manifest = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string };
  t.is(SVC_VERSION, manifest.version);
});

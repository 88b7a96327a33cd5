import test from "ava";
import { benchOptions, selectBenchmarks } from "./args.js";

const known = ["sim", "clone", "push", "forge"];

test("no argument selects every benchmark in registry order", (t) => {
  t.deepEqual(selectBenchmarks([], known), ["sim", "clone", "push", "forge"]);
});

test("named benchmarks run in the order given, each once", (t) => {
  t.deepEqual(selectBenchmarks(["push", "sim", "push"], known), ["push", "sim"]);
});

test("an unknown name is a usage error that lists the known ones", (t) => {
  const error = t.throws(() => selectBenchmarks(["sim", "simm"], known));
  t.is((error as { code?: string }).code, "SVC_USAGE");
  t.regex(error?.message ?? "", /unknown benchmark "simm"; known benchmarks: sim, clone, push, forge/);
  t.notRegex(error?.message ?? "", /"sim"[,;]/);
});

test("--large is an option, not a benchmark name, wherever it stands", (t) => {
  t.deepEqual(selectBenchmarks(["clone", "--large"], known), ["clone"]);
  t.deepEqual(selectBenchmarks(["--large"], known), known);
  t.deepEqual(benchOptions(["--large", "clone"]), { large: true });
  t.deepEqual(benchOptions(["clone"]), { large: false });
});

test("an unknown option is a usage error that names the known ones", (t) => {
  const error = t.throws(() => selectBenchmarks(["clone", "--huge"], known));
  t.is((error as { code?: string }).code, "SVC_USAGE");
  t.regex(error?.message ?? "", /unknown option "--huge"; known options: --large/);
});

/**
 * The gate of the real-backend contract tests (Document 3, "Rules for test fixtures" 4; DESIGN.md §6): they
 * run only with `SVC_REAL_BACKEND_TESTS=1` (`npm run test:real`) and every variable their target needs.
 * Otherwise each writes `SKIP: env vars unset (<what is missing>): <test>` on stderr and is registered as
 * skipped, so a plain `npm test` never reaches a real service.
 */
import test from "ava";

/**
 * Calls `register` with the variables of the target (`required`, and those of `optional` that are set) when
 * the real tests may run; else registers each of `names` as skipped, saying why.
 */
export function whenRealBackend(
  required: readonly string[],
  optional: readonly string[],
  names: readonly string[],
  register: (vars: Record<string, string>) => void,
  env: NodeJS.ProcessEnv = process.env,
): void {
  const missing = [
    ...(env.SVC_REAL_BACKEND_TESTS === "1" ? [] : ["SVC_REAL_BACKEND_TESTS=1"]),
    ...required.filter((name) => !env[name]),
  ];
  if (missing.length > 0) {
    for (const name of names) skipReal(name, missing);
    return;
  }
  const vars: Record<string, string> = {};
  for (const name of [...required, ...optional]) {
    const value = env[name];
    if (value) vars[name] = value;
  }
  register(vars);
}

/** Registers `name` as skipped because `missing` are not set, saying so on stderr. */
export function skipReal(name: string, missing: readonly string[]): void {
  process.stderr.write(`SKIP: env vars unset (${missing.join(", ")}): ${name}\n`);
  test.skip(name, () => {});
}

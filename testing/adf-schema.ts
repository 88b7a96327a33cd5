/**
 * Atlassian's own JSON schema of ADF (`@atlaskit/adf-schema`, dist/json-schema/v1/full.json) as a validator:
 * the judge of every document svc sends a tracker (the converter's tests) and of every description the fake
 * tracker accepts (testing/fake-tracker.ts). One module, so both judge by the same schema.
 *
 * The schema says draft-04 (`$schema`); ajv 8 speaks draft-07 and later, and ajv-draft-04 is not installed.
 * The schema uses none of the keywords whose meaning changed after draft-04 (`id`, boolean
 * `exclusiveMinimum`/`exclusiveMaximum`), so its `$schema` is dropped and ajv's default draft reads it the
 * same; `strict: false` lets ajv pass over the annotations it does not know. adf-schema.test.ts proves the
 * validator rejects documents the schema forbids.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { ValidateFunction } from "ajv";

const require = createRequire(import.meta.url);

/** The schema's file and the package version it came from. */
export const ADF_SCHEMA_PATH = require.resolve("@atlaskit/adf-schema/dist/json-schema/v1/full.json");
export const ADF_SCHEMA_VERSION = (require("@atlaskit/adf-schema/package.json") as { version: string })
  .version;

let validate: ValidateFunction | undefined;

/** Compiled on first use: most tests that start a fake tracker never send it a description. */
function validator(): ValidateFunction {
  if (validate) return validate;
  const { $schema: _draft, ...schema } = JSON.parse(readFileSync(ADF_SCHEMA_PATH, "utf8")) as Record<
    string,
    unknown
  >;
  const Ajv = (require("ajv") as { default: typeof import("ajv").default }).default;
  validate = new Ajv({ strict: false, allErrors: false }).compile(schema);
  return validate;
}

/**
 * Why `doc` is not a valid ADF document by Atlassian's schema (the first failing rule, with its place in
 * the document), or undefined when it is.
 */
export function adfSchemaProblem(doc: unknown): string | undefined {
  const check = validator();
  if (check(doc)) return undefined;
  // The schema is a deep anyOf: the error with the longest path is the one nearest the fault.
  const errors = [...(check.errors ?? [])].sort((a, b) => b.instancePath.length - a.instancePath.length);
  const first = errors[0];
  if (first === undefined) return "the document does not match the ADF schema";
  return `${first.instancePath || "/"} ${first.message ?? "does not match"} (schema ${first.schemaPath})`;
}

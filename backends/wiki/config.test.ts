/**
 * The wiki configuration (Document 3 "Required environment variables"): one message naming every missing
 * variable, tenant validation with `invalid wiki tenant subdomain:`, the base URL and its override.
 */
import test from "ava";
import fc from "fast-check";
import { UserFacingError } from "../../core/errors.js";
import { fuzzParams } from "../../testing/fuzz.js";
import { checkTenant, wikiConfig } from "./config.js";

const COMPLETE = {
  VENDOR_API_KEY: "token-123",
  VENDOR_EMAIL: "me@example.test",
  SVC_WIKI_TENANT: "acme",
  SVC_ALLOWED_ORIGINS: "https://acme.atlassian.net",
} as const;

const TENANT_MESSAGE = /^invalid wiki tenant subdomain: /;

test("all four variables give the tenant's base URL on the vendor domain", (t) => {
  t.deepEqual(wikiConfig({ ...COMPLETE }), {
    email: "me@example.test",
    apiToken: "token-123",
    tenant: "acme",
    baseUrl: "https://acme.atlassian.net",
    allowedOrigins: "https://acme.atlassian.net",
  });
});

test("SVC_WIKI_BASE_URL replaces the base URL, without its trailing slashes; the tenant is still checked", (t) => {
  t.is(
    wikiConfig({ ...COMPLETE, SVC_WIKI_BASE_URL: "http://127.0.0.1:9999//" }).baseUrl,
    "http://127.0.0.1:9999",
  );
  t.is(wikiConfig({ ...COMPLETE, SVC_WIKI_BASE_URL: "" }).baseUrl, "https://acme.atlassian.net");
  t.throws(
    () => wikiConfig({ ...COMPLETE, SVC_WIKI_TENANT: "Acme", SVC_WIKI_BASE_URL: "http://127.0.0.1:1" }),
    {
      message: TENANT_MESSAGE,
    },
  );
});

test("every combination of missing variables is named in one message, in a fixed order", (t) => {
  const names = Object.keys(COMPLETE) as (keyof typeof COMPLETE)[];
  for (let mask = 1; mask < 1 << names.length; mask++) {
    const missing = names.filter((_, index) => mask & (1 << index));
    const env: NodeJS.ProcessEnv = { ...COMPLETE };
    for (const name of missing) delete env[name];
    const error = t.throws(() => wikiConfig(env), { instanceOf: UserFacingError });
    const label = missing.join(",");
    t.is(error?.code, "SVC_USAGE", label);
    t.deepEqual(error?.data.missing, missing, label);
    const firstLine = error?.message.split("\n")[0] ?? "";
    t.true(firstLine.endsWith(`not set: ${missing.join(", ")}`), `${label}: ${firstLine}`);
    t.regex(
      firstLine,
      missing.length === 1 ? /needs this environment variable/ : /needs these environment variables/,
    );
  }
});

test("an empty variable counts as missing, except SVC_WIKI_TENANT: an empty tenant is an invalid tenant", (t) => {
  const empty = t.throws<UserFacingError>(() =>
    wikiConfig({ ...COMPLETE, VENDOR_API_KEY: "", SVC_ALLOWED_ORIGINS: "" }),
  );
  t.deepEqual(empty?.data.missing, ["VENDOR_API_KEY", "SVC_ALLOWED_ORIGINS"]);
  const tenant = t.throws(() => wikiConfig({ ...COMPLETE, SVC_WIKI_TENANT: "" }));
  t.regex(tenant?.message ?? "", TENANT_MESSAGE);
  t.regex(tenant?.message ?? "", /it is empty/);
});

test("missing variables are reported before a bad tenant", (t) => {
  const error = t.throws<UserFacingError>(() => wikiConfig({ SVC_WIKI_TENANT: "Acme.corp" }));
  t.deepEqual(error?.data.missing, ["VENDOR_API_KEY", "VENDOR_EMAIL", "SVC_ALLOWED_ORIGINS"]);
});

test("bad tenants get `invalid wiki tenant subdomain:` with the reason", (t) => {
  const cases: [string, RegExp][] = [
    ["Acme.corp", /only lower-case letters, digits and '-'/],
    ["a".repeat(64), /it has 64 characters, at most 63 are allowed/],
    ["", /it is empty/],
    ["acme.atlassian.net", /no dots/],
    ["https://acme", /no scheme/],
    ["acme_corp", /only lower-case/],
    ["ac me", /only lower-case/],
    ["acmé", /only lower-case/],
    ["acme\n", /only lower-case/],
  ];
  for (const [tenant, reason] of cases) {
    const error = t.throws(
      () => checkTenant(tenant),
      { instanceOf: UserFacingError },
      JSON.stringify(tenant),
    );
    t.regex(error?.message ?? "", TENANT_MESSAGE);
    t.regex(error?.message ?? "", reason, JSON.stringify(tenant));
    t.regex(error?.message ?? "", /set SVC_WIKI_TENANT to e\.g\. acme/);
  }
  // A very long value is quoted shortened, never whole.
  const long = t.throws(() => checkTenant("x".repeat(5000)));
  t.true((long?.message.length ?? 0) < 400);
});

test("a tenant is valid exactly when it is 1 to 63 characters of [a-z0-9-]", (t) => {
  for (const tenant of ["a", "acme", "acme-corp-2", "0", "-", "a".repeat(63)]) {
    t.notThrows(() => checkTenant(tenant), tenant);
  }
  fc.assert(
    fc.property(fc.stringMatching(/^[a-z0-9-]{1,63}$/), (tenant) => {
      checkTenant(tenant);
    }),
    fuzzParams(100),
  );
  fc.assert(
    fc.property(fc.string({ maxLength: 80 }), (tenant) => {
      const valid = /^[a-z0-9-]{1,63}$/.test(tenant);
      let threw = false;
      try {
        checkTenant(tenant);
      } catch (error) {
        threw = error instanceof UserFacingError && TENANT_MESSAGE.test(error.message);
      }
      return threw !== valid;
    }),
    fuzzParams(100),
  );
  t.pass();
});

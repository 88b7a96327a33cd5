/**
 * The allowlist and credentials checks (cli/doctor/remote.ts) for each backend kind, with the environment
 * given: what fails, the fix as printed, and that no value of a credential appears anywhere.
 */
import test from "ava";
import { parseRemoteUrl } from "../../core/remote-url.js";
import { checkAllowlist, checkCredentials } from "./remote.js";

const SIM = parseRemoteUrl("svc::http://127.0.0.1:7878/projects/demo");
const SIM_V6 = parseRemoteUrl("svc::http://[::1]:7878/projects/demo");
const WIKI = parseRemoteUrl("svc::https://acme.atlassian.net/wiki/projects/DOCS");
const FORGE = parseRemoteUrl("svc::https://api.github.com/forge/projects/acme/widgets");
const TRACKER = parseRemoteUrl("svc::https://acme.atlassian.net/tracker/projects/TEST");

test("allowlist: the simulator falls back to the default list, which covers 127.0.0.1 and localhost", (t) => {
  t.like(checkAllowlist(SIM, {}), { status: "ok" });
  t.like(checkAllowlist(SIM_V6, {}), {
    status: "fail",
    fix: "export SVC_ALLOWED_ORIGINS='http://127.0.0.1:*,http://localhost:*,http://[::1]:7878'",
  });
});

test("allowlist: a list without the origin gets it added; malformed entries are dropped from the fix", (t) => {
  t.like(checkAllowlist(WIKI, { SVC_ALLOWED_ORIGINS: "https://other.example" }), {
    status: "fail",
    fix: "export SVC_ALLOWED_ORIGINS=https://other.example,https://acme.atlassian.net",
  });
  const bad = checkAllowlist(SIM, { SVC_ALLOWED_ORIGINS: "http://127.0.0.1:*, ftp://x" });
  t.like(bad, {
    status: "fail",
    fix: "export SVC_ALLOWED_ORIGINS='http://127.0.0.1:*,http://127.0.0.1:7878'",
  });
  t.regex(bad.message, /"ftp:\/\/x" is not scheme:\/\/host/);
  t.like(checkAllowlist(FORGE, { SVC_ALLOWED_ORIGINS: "https://api.github.com" }), { status: "ok" });
});

test("allowlist: wiki, forge and tracker have no default; unset, the fix sets the origin alone", (t) => {
  t.like(checkAllowlist(TRACKER, {}), {
    status: "fail",
    fix: "export SVC_ALLOWED_ORIGINS=https://acme.atlassian.net",
  });
});

test("credentials: the missing variables by name, where each comes from, placeholders in the fix", (t) => {
  const secret = "tok-7d1f0b2c";
  const wiki = checkCredentials(WIKI, {
    VENDOR_API_KEY: secret,
    SVC_ALLOWED_ORIGINS: "https://acme.atlassian.net",
  });
  t.like(wiki, { status: "fail", fix: "export VENDOR_EMAIL=<account-email> SVC_WIKI_TENANT=acme" });
  t.deepEqual(wiki.details?.missing, ["VENDOR_EMAIL", "SVC_WIKI_TENANT"]);
  t.regex(wiki.message, /VENDOR_EMAIL: the email of the wiki account/);
  t.false(JSON.stringify(wiki).includes(secret));

  t.like(checkCredentials(FORGE, { SVC_ALLOWED_ORIGINS: "https://api.github.com" }), {
    status: "fail",
    fix: "export FORGE_TOKEN=<token>",
  });
  t.like(checkCredentials(TRACKER, {}), {
    status: "fail",
    fix: "export TRACKER_EMAIL=<account-email> TRACKER_API_TOKEN=<api-token> SVC_TRACKER_INSTANCE=acme",
  });
});

test("credentials: all set is ok and names them without values; SVC_ALLOWED_ORIGINS is left to allowlist", (t) => {
  const secret = "ghp_4e0c9d11";
  const forge = checkCredentials(FORGE, {
    FORGE_TOKEN: secret,
    SVC_ALLOWED_ORIGINS: "https://api.github.com",
  });
  t.like(forge, { status: "ok" });
  t.false(JSON.stringify(forge).includes(secret));
  t.like(checkCredentials(FORGE, { FORGE_TOKEN: secret }), { status: "ok" });
  t.like(checkCredentials(SIM, {}), { status: "ok", message: "the simulator needs none" });
});

test("credentials: a value the backend refuses is named with the fix the remote URL allows", (t) => {
  const env = {
    VENDOR_EMAIL: "a@b.test",
    VENDOR_API_KEY: "k",
    SVC_ALLOWED_ORIGINS: "https://acme.atlassian.net",
  };
  const tenant = checkCredentials(WIKI, { ...env, SVC_WIKI_TENANT: "acme.atlassian.net" });
  t.like(tenant, { status: "fail", fix: "export SVC_WIKI_TENANT=acme" });
  t.regex(tenant.message, /invalid wiki tenant subdomain/);
  const forge = checkCredentials(FORGE, { FORGE_TOKEN: "t", SVC_FORGE_BASE_URL: "not a url" });
  t.like(forge, { status: "fail", fix: "unset SVC_FORGE_BASE_URL" });
});

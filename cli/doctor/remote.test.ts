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
const PLACE = { dir: "d", remote: "origin" };

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

test("credentials: the missing variables by name and where each comes from; what svc cannot know in words, never a placeholder", (t) => {
  const secret = "tok-7d1f0b2c";
  const wiki = checkCredentials(
    WIKI,
    { VENDOR_API_KEY: secret, SVC_ALLOWED_ORIGINS: "https://acme.atlassian.net" },
    PLACE,
  );
  t.like(wiki, {
    status: "fail",
    fix: null,
    advice:
      "svc cannot know VENDOR_EMAIL: set VENDOR_EMAIL to the email of the wiki account the API token was issued to, " +
      "in the environment svc and git run in, and run export SVC_WIKI_TENANT=acme; then run svc doctor d",
  });
  t.deepEqual(wiki.details?.missing, ["VENDOR_EMAIL", "SVC_WIKI_TENANT"]);
  t.regex(wiki.message, /VENDOR_EMAIL: the email of the wiki account/);
  t.false(JSON.stringify(wiki).includes(secret));

  t.like(checkCredentials(FORGE, { SVC_ALLOWED_ORIGINS: "https://api.github.com" }, PLACE), {
    status: "fail",
    fix: null,
    advice:
      "svc cannot know FORGE_TOKEN: set FORGE_TOKEN to a forge token that can read and write the repository's issues, " +
      "in the environment svc and git run in; then run svc doctor d",
  });
  t.like(checkCredentials(TRACKER, {}, { dir: undefined, remote: "upstream" }), {
    status: "fail",
    fix: null,
    advice:
      "svc cannot know TRACKER_EMAIL or TRACKER_API_TOKEN: set TRACKER_EMAIL to the email of the tracker account, " +
      "and TRACKER_API_TOKEN to an API token of that tracker account, in the environment svc and git run in, " +
      "and run export SVC_TRACKER_INSTANCE=acme; then run svc doctor --remote upstream",
  });
  const tenantOnly = checkCredentials(
    WIKI,
    { VENDOR_API_KEY: secret, VENDOR_EMAIL: "a@b.test", SVC_ALLOWED_ORIGINS: "https://acme.atlassian.net" },
    PLACE,
  );
  t.like(tenantOnly, { status: "fail", fix: "export SVC_WIKI_TENANT=acme" });
  for (const finding of [wiki, tenantOnly]) t.notRegex(JSON.stringify(finding), /<[a-z-]+>/);
});

test("credentials: all set is ok and names them without values; SVC_ALLOWED_ORIGINS is left to allowlist", (t) => {
  const secret = "ghp_4e0c9d11";
  const forge = checkCredentials(
    FORGE,
    {
      FORGE_TOKEN: secret,
      SVC_ALLOWED_ORIGINS: "https://api.github.com",
    },
    PLACE,
  );
  t.like(forge, { status: "ok" });
  t.false(JSON.stringify(forge).includes(secret));
  t.like(checkCredentials(FORGE, { FORGE_TOKEN: secret }, PLACE), { status: "ok" });
  t.like(checkCredentials(SIM, {}, PLACE), { status: "ok", message: "the simulator needs none" });
});

test("credentials: a value the backend refuses is named with the fix the remote URL allows", (t) => {
  const env = {
    VENDOR_EMAIL: "a@b.test",
    VENDOR_API_KEY: "k",
    SVC_ALLOWED_ORIGINS: "https://acme.atlassian.net",
  };
  const tenant = checkCredentials(WIKI, { ...env, SVC_WIKI_TENANT: "acme.atlassian.net" }, PLACE);
  t.like(tenant, { status: "fail", fix: "export SVC_WIKI_TENANT=acme" });
  t.regex(tenant.message, /invalid wiki tenant subdomain/);
  const forge = checkCredentials(FORGE, { FORGE_TOKEN: "t", SVC_FORGE_BASE_URL: "not a url" }, PLACE);
  t.like(forge, { status: "fail", fix: "unset SVC_FORGE_BASE_URL" });
});

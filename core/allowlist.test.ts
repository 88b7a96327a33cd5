/**
 * The egress allowlist (core/allowlist.ts `parseAllowlist`, `isOriginAllowed`; `HttpClient.checkEgress`), the
 * security boundary every request crosses (DESIGN.md §4, §6): a URL is allowed exactly when its origin, as
 * WHATWG URL normalises it, is one an entry names, however either is spelled: case, trailing dots, IPv4 in
 * other notations, IPv6, explicit default ports, `*` ports, user names before the host, `@`, `\`, `#` and
 * `?` that move where the host ends, percent-encoding in the host. No URL whose host is not in the list is
 * ever allowed. A malformed entry is a `UserFacingError` naming it; the refusal's printed fix works.
 */
import test from "ava";
import fc from "fast-check";
import { fuzzParams } from "../testing/fuzz.js";
import { DEFAULT_ALLOWED_ORIGINS, EgressDeniedError, isOriginAllowed, parseAllowlist } from "./allowlist.js";
import { UserFacingError } from "./errors.js";
import { HttpClient } from "./http.js";

function allowed(list: string, url: string): boolean {
  return isOriginAllowed(new URL(url), parseAllowlist(list));
}

/** [allowlist, URL, allowed?, why]: each decided by hand from what the URL's request would connect to. */
const RECORDED: [string, string, boolean, string][] = [
  [DEFAULT_ALLOWED_ORIGINS, "http://127.0.0.1:7878/projects/demo", true, "the default list"],
  [DEFAULT_ALLOWED_ORIGINS, "http://localhost:1/", true, "the default list"],
  [DEFAULT_ALLOWED_ORIGINS, "http://127.0.0.1/", true, "`*` takes the default port too"],
  [DEFAULT_ALLOWED_ORIGINS, "HTTP://LocalHost:1/", true, "scheme and host are case-insensitive"],
  [DEFAULT_ALLOWED_ORIGINS, "https://127.0.0.1:1/", false, "another scheme"],
  [DEFAULT_ALLOWED_ORIGINS, "http://[::1]:1/", false, "::1 is not in the default list"],
  [DEFAULT_ALLOWED_ORIGINS, "http://127.0.0.2:1/", false, "another loopback address"],
  [
    DEFAULT_ALLOWED_ORIGINS,
    "http://127.0.0.1.:1/",
    true,
    "an IPv4 address with a trailing dot is the address",
  ],
  [DEFAULT_ALLOWED_ORIGINS, "http://localhost.:1/", false, "a trailing dot makes another origin: refused"],
  [DEFAULT_ALLOWED_ORIGINS, "http://127.1:1/", true, "127.1 is 127.0.0.1"],
  [DEFAULT_ALLOWED_ORIGINS, "http://2130706433:1/", true, "a 32-bit number is 127.0.0.1"],
  [DEFAULT_ALLOWED_ORIGINS, "http://0x7f.0.0.1:1/", true, "hexadecimal 127.0.0.1"],
  [DEFAULT_ALLOWED_ORIGINS, "http://%6c%6fcalhost:1/", true, "percent-encoded localhost is localhost"],
  [DEFAULT_ALLOWED_ORIGINS, "http://127.0.0.1%2eevil.com:1/", false, "%2e is a dot: 127.0.0.1.evil.com"],
  [DEFAULT_ALLOWED_ORIGINS, "http://evil@127.0.0.1:1/", true, "a user name; the host is 127.0.0.1"],
  [DEFAULT_ALLOWED_ORIGINS, "http://127.0.0.1:1@evil.com/", false, "the host is evil.com"],
  [DEFAULT_ALLOWED_ORIGINS, "http://localhost:1@evil.com:1/", false, "the host is evil.com"],
  [DEFAULT_ALLOWED_ORIGINS, "http://evil.com#@127.0.0.1:1/", false, "the host is evil.com"],
  [DEFAULT_ALLOWED_ORIGINS, "http://evil.com?@127.0.0.1:1/", false, "the host is evil.com"],
  [
    DEFAULT_ALLOWED_ORIGINS,
    "http://127.0.0.1\\@evil.com/",
    true,
    "`\\` ends the host: the path is /@evil.com",
  ],
  [DEFAULT_ALLOWED_ORIGINS, "http://evil.com\\@127.0.0.1/", false, "`\\` ends the host: evil.com"],
  [DEFAULT_ALLOWED_ORIGINS, "http://localhost.evil.com:1/", false, "another host"],
  [DEFAULT_ALLOWED_ORIGINS, "http://[::ffff:127.0.0.1]:1/", false, "an IPv6 address is not an IPv4 entry"],
  ["https://acme.atlassian.net", "https://acme.atlassian.net/wiki/api/v2/spaces", true, "the entry's origin"],
  ["https://acme.atlassian.net", "https://acme.atlassian.net:443/", true, "the default port, explicit"],
  ["https://acme.atlassian.net", "https://ACME.Atlassian.NET/", true, "case"],
  ["https://acme.atlassian.net", "https://acme.atlassian.net:8443/", false, "another port"],
  ["https://acme.atlassian.net", "http://acme.atlassian.net/", false, "another scheme"],
  [
    "https://acme.atlassian.net",
    "https://acme.atlassian.net./",
    false,
    "a trailing dot makes another origin",
  ],
  ["https://acme.atlassian.net", "https://acme.atlassian.net.evil.com/", false, "a longer host"],
  ["https://acme.atlassian.net", "https://evilacme.atlassian.net/", false, "a host that ends like it"],
  ["https://acme.atlassian.net:443", "https://acme.atlassian.net/", true, "an entry's explicit default port"],
  ["http://127.0.0.1:80", "http://127.0.0.1/", true, "port 80 written or not"],
  ["http://127.0.0.1:8080", "http://127.0.0.1:80/", false, "another port"],
  ["http://[::1]:*", "http://[::1]:7878/", true, "IPv6 loopback"],
  ["http://[::1]:*", "http://[0:0:0:0:0:0:0:1]:7878/", true, "IPv6 loopback written in full"],
  ["http://[::1]:*", "http://127.0.0.1:7878/", false, "IPv4 loopback is another host"],
  ["https://*.example.com", "https://a.example.com/", true, "a name under the domain"],
  ["https://*.example.com", "https://a.b.example.com/", true, "a name deeper under it"],
  ["https://*.example.com", "https://example.com/", false, "the domain itself is not under it"],
  ["https://*.example.com", "https://aexample.com/", false, "a name that ends like it"],
  ["https://*.example.com", "https://a.example.com.evil.net/", false, "a longer name"],
  ["https://*.example.com", "https://a.example.com:444/", false, "another port"],
  // Entries are normalised as URLs are.
  ["HTTP://LOCALHOST:*", "http://localhost:5/", true, "an entry's case"],
  ["http://127.1:*", "http://127.0.0.1:5/", true, "an entry's IPv4 notation"],
  ["http://[0:0::1]:*", "http://[::1]:5/", true, "an entry's IPv6 notation"],
  ["http://127.0.0.1.:*", "http://127.0.0.1:5/", true, "an entry's IPv4 trailing dot"],
  ["https://bücher.example", "https://xn--bcher-kva.example/", true, "an entry's Unicode host"],
  ["https://bücher.example", "https://BÜCHER.example/", true, "a URL's Unicode host"],
  ["http://127.0.0.1:0080", "http://127.0.0.1/", true, "an entry's port with a leading zero"],
];

test("recorded: each URL is allowed or refused as what it connects to says", (t) => {
  for (const [list, url, expected, why] of RECORDED)
    t.is(allowed(list, url), expected, `${list} ${url}: ${why}`);
});

test("recorded: an entry that is more or less than an origin is refused, naming it", (t) => {
  for (const entry of [
    "http://evil@127.0.0.1:*",
    "http://127.0.0.1:*/path",
    "http://127.0.0.1?x",
    "http://127.0.0.1#x",
    "ftp://127.0.0.1",
    "http://",
    "127.0.0.1:*",
    "//127.0.0.1:*",
    "http://127.0.0.1:99999",
    "http://127.0.0.1:-1",
    "http://*.127.0.0.1:*",
    "http://*.[::1]:*",
    "http://a b:*",
    "http://a\\b",
    "http://[::1:*",
    "http://[zz]:*",
  ]) {
    const error = t.throws(() => parseAllowlist(`http://localhost:*,${entry}`), {
      instanceOf: UserFacingError,
    });
    t.is(
      error?.message,
      `SVC_ALLOWED_ORIGINS entry ${JSON.stringify(entry)} is not scheme://host[:port|:*], e.g. http://127.0.0.1:*`,
    );
  }
  t.deepEqual(parseAllowlist(" , http://127.0.0.1:* ,, "), [
    { protocol: "http:", host: "127.0.0.1", port: "*" },
  ]);
  t.deepEqual(parseAllowlist(""), []);
});

test("the refusal names the origin and a fix that, set as printed, lets the request through", (t) => {
  const client = new HttpClient({ agent: "allowlist-test", allowedOrigins: DEFAULT_ALLOWED_ORIGINS });
  const error = t.throws(() => client.checkEgress("https://evil@Acme.example:8443/x?token=1"), {
    instanceOf: EgressDeniedError,
  });
  t.is(error?.code, "SVC_EGRESS_DENIED");
  t.is(
    error?.message,
    "origin not allowlisted: https://acme.example:8443; add it to SVC_ALLOWED_ORIGINS (comma-separated, e.g. " +
      'SVC_ALLOWED_ORIGINS="http://127.0.0.1:*,http://localhost:*,https://acme.example:8443") if you trust it',
  );
  const printed = /SVC_ALLOWED_ORIGINS="([^"]*)"/.exec(error?.message ?? "")?.[1] ?? "";
  const fixed = new HttpClient({ agent: "allowlist-test", allowedOrigins: printed });
  t.is(fixed.checkEgress("https://evil@Acme.example:8443/x?token=1").hostname, "acme.example");
  t.throws(() => fixed.checkEgress("https://acme.example:8444/"), { instanceOf: EgressDeniedError });
});

// ---------------------------------------------------------------------------------------------------------
// Properties.

/** Hosts in several spellings each: the same origin written differently, and look-alikes. */
const HOSTS = [
  "127.0.0.1",
  "127.1",
  "2130706433",
  "0x7f.0.0.1",
  "127.0.0.1.",
  "127.0.0.2",
  "localhost",
  "LOCALHOST",
  "localhost.",
  "%6cocalhost",
  "[::1]",
  "[0:0::1]",
  "[::ffff:127.0.0.1]",
  "acme.atlassian.net",
  "ACME.atlassian.net",
  "acme.atlassian.net.",
  "a.acme.atlassian.net",
  "evilacme.atlassian.net",
  "acme.atlassian.net.evil.com",
  "example.com",
  "a.example.com",
  "b.a.example.com",
  "bücher.example",
  "xn--bcher-kva.example",
];

const scheme = fc.constantFrom("http", "https", "HTTP", "Https");
const port = fc.constantFrom("", ":80", ":443", ":080", ":7878", ":8443", ":1");

/** Allowlist entries from the same pool, with `*` ports and wildcards. */
const entry = fc
  .tuple(
    scheme,
    fc.constantFrom("", "*."),
    fc.constantFrom(...HOSTS),
    fc.constantFrom("", ":*", ":80", ":443", ":7878"),
  )
  .map(([s, wild, host, p]) => `${s}://${wild}${host}${p}`)
  .filter((text) => {
    try {
      parseAllowlist(text);
      return true;
    } catch {
      return false;
    }
  });

/** URLs to the same hosts, with user names, `@`/`#`/`?`/`\` tricks and paths. */
const url = fc
  .tuple(
    scheme,
    fc.constantFrom("", "evil@", "u:p@", "127.0.0.1@", "localhost:1@"),
    fc.constantFrom(...HOSTS),
    port,
    fc.constantFrom("/", "/x", "#@evil.com/", "?@evil.com", "\\@evil.com/", "@evil.com/"),
  )
  .map(([s, user, host, p, tail]) => `${s}://${user}${host}${p}${tail}`)
  .filter((text) => URL.canParse(text));

/**
 * The reference, written from the WHATWG side only: the entry as a URL (with its `*` port, or its `*.`
 * wildcard, taken off first) has the URL's scheme and host, and the port matches.
 */
function reference(entries: readonly string[], target: URL): boolean {
  return entries.some((text) => {
    const anyPort = text.endsWith(":*");
    const wild = /^[a-z]+:\/\/\*\./i.test(text);
    const named = new URL(text.replace(/:\*$/, "").replace("://*.", "://"));
    const hostMatches = wild
      ? target.hostname.endsWith(`.${named.hostname}`)
      : target.hostname === named.hostname;
    return named.protocol === target.protocol && hostMatches && (anyPort || named.port === target.port);
  });
}

test("property: a URL is allowed exactly when its normalised origin matches an entry", (t) => {
  fc.assert(
    fc.property(fc.array(entry, { minLength: 1, maxLength: 4 }), url, (entries, text) => {
      const target = new URL(text);
      return isOriginAllowed(target, parseAllowlist(entries.join(","))) === reference(entries, target);
    }),
    fuzzParams(2000),
  );
  t.pass();
});

test("property: no URL whose host is not in the list is ever allowed, whatever the URL string", (t) => {
  const hostile = fc
    .array(
      fc.oneof(
        fc.constantFrom(
          "http://",
          "https://",
          "127.0.0.1",
          "localhost",
          "@",
          ":",
          "1",
          "/",
          "\\",
          "#",
          "?",
          "%2e",
          "%40",
          ".",
          "evil.com",
          "[::1]",
        ),
        fc.string({ maxLength: 4 }),
      ),
      { maxLength: 10 },
    )
    .map((parts) => parts.join(""));
  const patterns = parseAllowlist(DEFAULT_ALLOWED_ORIGINS);
  fc.assert(
    fc.property(fc.oneof(hostile, fc.webUrl({ withQueryParameters: true, withFragments: true })), (text) => {
      if (!URL.canParse(text)) return true;
      const target = new URL(text);
      if (!isOriginAllowed(target, patterns)) return true;
      return (
        target.protocol === "http:" && (target.hostname === "127.0.0.1" || target.hostname === "localhost")
      );
    }),
    fuzzParams(2000),
  );
  t.pass();
});

test("property: any allowlist text is patterns or a UserFacingError naming an entry, never another failure", (t) => {
  const text = fc
    .array(
      fc.oneof(
        fc.constantFrom(
          "http://",
          "https://",
          "HTTP://",
          "*.",
          "*",
          ":",
          ":*",
          ",",
          "[",
          "]",
          "::1",
          "@",
          "/",
          "127.0.0.1",
          "%",
        ),
        fc.string({ maxLength: 5 }),
      ),
      { maxLength: 8 },
    )
    .map((parts) => parts.join(""));
  fc.assert(
    fc.property(text, (list) => {
      try {
        const patterns = parseAllowlist(list);
        return patterns.every((p) => (p.protocol === "http:" || p.protocol === "https:") && p.host !== "");
      } catch (error) {
        if (!(error instanceof UserFacingError)) throw error;
        return /^SVC_ALLOWED_ORIGINS entry ".*" is not scheme:\/\/host\[:port\|:\*\]/s.test(error.message);
      }
    }),
    fuzzParams(1000),
  );
  t.pass();
});

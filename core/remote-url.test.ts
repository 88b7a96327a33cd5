/**
 * `parseRemoteUrl` (core/remote-url.ts): the URL forms `svc init` writes for each backend (DESIGN.md §4 "URL
 * forms"), read back; every refusal a `UserFacingError` that names the input, except a URL with a user name
 * or password, which is never echoed; any string gives one of the two, never another failure.
 */
import test from "ava";
import fc from "fast-check";
import { fuzzParams } from "../testing/fuzz.js";
import { UserFacingError } from "./errors.js";
import { initCommandFor, parseRemoteUrl, parseRemoteUrlLookingUp, type RemoteUrl } from "./remote-url.js";

const RECORDED: [string, Omit<RemoteUrl, "url">][] = [
  [
    "svc::http://127.0.0.1:7878/projects/demo",
    { kind: "sim", origin: "http://127.0.0.1:7878", project: "demo" },
  ],
  [
    "svc::http://localhost:7878/projects/demo",
    { kind: "sim", origin: "http://localhost:7878", project: "demo" },
  ],
  ["svc::http://[::1]:7878/projects/demo", { kind: "sim", origin: "http://[::1]:7878", project: "demo" }],
  [
    "svc::http://127.0.0.2/projects/my%20slug",
    { kind: "sim", origin: "http://127.0.0.2", project: "my slug" },
  ],
  [
    "svc::https://acme.atlassian.net/wiki/projects/DOCS",
    { kind: "wiki", origin: "https://acme.atlassian.net", project: "DOCS" },
  ],
  [
    "svc::https://acme.atlassian.net/tracker/projects/TEST",
    { kind: "tracker", origin: "https://acme.atlassian.net", project: "TEST" },
  ],
  [
    "svc::https://api.github.com/forge/projects/acme/widgets",
    { kind: "forge", origin: "https://api.github.com", project: "acme/widgets" },
  ],
  [
    "svc::https://ghe.example/api/v3/forge/projects/acme/widgets/",
    { kind: "forge", origin: "https://ghe.example", project: "acme/widgets" },
  ],
  // A marker names the kind on any origin, loopback too (a fake server in tests, SVC_<KIND>_BASE_URL).
  [
    "svc::http://127.0.0.1:9/wiki/projects/SVC",
    { kind: "wiki", origin: "http://127.0.0.1:9", project: "SVC" },
  ],
  // Without the `svc::` git strips before it starts the helper.
  ["http://127.0.0.1:7878/projects/demo", { kind: "sim", origin: "http://127.0.0.1:7878", project: "demo" }],
];

test("recorded: the URL form of each backend reads as its kind, origin and project", (t) => {
  for (const [input, expected] of RECORDED) {
    const remote = parseRemoteUrl(input);
    t.deepEqual(remote, { ...expected, url: input.replace(/^svc::/, "") }, input);
  }
});

const USAGE = "expected svc::http://127.0.0.1:7878/projects/demo";

test("recorded: each refusal says what was wrong with the URL, naming it", (t) => {
  const cases: [string, RegExp][] = [
    ["svc::127.0.0.1:7878/projects/demo", /is not a URL; expected for example/],
    ["svc::demo", /is not a URL/],
    ["svc::ftp://127.0.0.1/projects/demo", /must use http or https, like/],
    ["svc::file:///projects/demo", /must use http or https/],
    [
      "svc::https://acme.atlassian.net/projects/DOCS",
      /names a simulator project \(no wiki\/, tracker\/ or forge\/ before \/projects\/\) on acme\.atlassian\.net, which is not a loopback address/,
    ],
    ["svc::http://127.0.0.1:7878/issues/demo", /does not name a project/],
    ["svc::http://127.0.0.1:7878/projects/", /does not name a project/],
    ["svc::http://127.0.0.1:7878/x/projects/demo", /does not name a project/],
    ["svc::https://api.github.com/forge/projects/acme", /does not name a project/],
    ["svc::https://acme.atlassian.net/wiki/projects/A/B", /does not name a project/],
    [
      "svc::http://127.0.0.1:7878/projects/%E0%A4%A",
      /has "%E0%A4%A" in its project, whose %-escapes are not UTF-8/,
    ],
  ];
  for (const [input, message] of cases) {
    const error = t.throws(() => parseRemoteUrl(input), { instanceOf: UserFacingError }, input);
    t.is(error?.code, "SVC_USAGE");
    t.regex(error?.message ?? "", message, input);
    t.true(error?.message.includes(JSON.stringify(input)), input);
  }
  t.true(
    t.throws(() => parseRemoteUrl("svc::http://127.0.0.1:7878/other"))?.message.includes(USAGE),
    "the refusal shows the form expected",
  );
});

test("a simulator URL on a host that is not loopback: the cause, and the same URL at 127.0.0.1 and with a kind", (t) => {
  const error = t.throws(() => parseRemoteUrl("svc::http://192.0.2.7:7878/projects/demo"), {
    instanceOf: UserFacingError,
  });
  t.is(
    error?.message,
    'remote URL "svc::http://192.0.2.7:7878/projects/demo" names a simulator project (no wiki/, tracker/ or forge/ before /projects/) ' +
      "on 192.0.2.7, which is not a loopback address: the simulator listens only on loopback (127.0.0.1, localhost, [::1]), by design, as it has no authentication. " +
      "For a simulator on this machine: git clone svc::http://127.0.0.1:7878/projects/demo (in an existing clone: git remote set-url origin svc::http://127.0.0.1:7878/projects/demo); " +
      "for a wiki space or a tracker project there, name its kind: svc::http://192.0.2.7:7878/wiki/projects/demo or svc::http://192.0.2.7:7878/tracker/projects/demo",
  );
  t.is(error?.data.loopbackUrl, "svc::http://127.0.0.1:7878/projects/demo");
  for (const url of [error?.data.loopbackUrl, "svc::http://192.0.2.7:7878/wiki/projects/demo"])
    t.notThrows(() => parseRemoteUrl(url as string));
});

test("parseRemoteUrlLookingUp: a simulator host name that does not resolve is named as such", async (t) => {
  const error = await t.throwsAsync(parseRemoteUrlLookingUp("svc::https://sim.invalid/projects/demo"), {
    instanceOf: UserFacingError,
  });
  t.regex(
    error?.message ?? "",
    /^remote URL "svc::https:\/\/sim\.invalid\/projects\/demo" names a simulator project \(no wiki\/, tracker\/ or forge\/ before \/projects\/\) on sim\.invalid, and the host name sim\.invalid does not resolve \((ENOTFOUND|EAI_AGAIN)\); the simulator listens only on loopback \(127\.0\.0\.1, localhost, \[::1\]\)\. For a simulator on this machine: git clone svc::http:\/\/127\.0\.0\.1\/projects\/demo \(in an existing clone: git remote set-url origin svc::http:\/\/127\.0\.0\.1\/projects\/demo\)$/,
  );
  t.is((await parseRemoteUrlLookingUp("svc::http://localhost:1/projects/demo")).project, "demo");
});

test("a URL with a user name or password is refused without echoing either, and the fix is runnable", (t) => {
  const error = t.throws(
    () => parseRemoteUrl("svc::https://alice:hunter2@acme.atlassian.net/wiki/projects/DOCS"),
    {
      instanceOf: UserFacingError,
    },
  );
  t.false(error?.message.includes("hunter2"));
  t.false(error?.message.includes("alice"));
  t.true(
    error?.message.endsWith(
      "git clone svc::https://acme.atlassian.net/wiki/projects/DOCS (in an existing clone: git remote set-url origin svc::https://acme.atlassian.net/wiki/projects/DOCS)",
    ),
  );
  t.is(parseRemoteUrl("svc::https://acme.atlassian.net/wiki/projects/DOCS").project, "DOCS");
});

test("a URL refused for another reason does not echo its user name or password either", (t) => {
  for (const url of [
    "svc::http://alice:hunter2@host:notaport/projects/x",
    "svc::ftp://alice:hunter2@host/projects/x",
    "svc::http://alice:hunter2@127.0.0.1:7878/nothing",
  ]) {
    const error = t.throws(() => parseRemoteUrl(url), { instanceOf: UserFacingError });
    t.false(error?.message.includes("hunter2"), error?.message);
    t.false(error?.message.includes("alice"), error?.message);
  }
  const notUrl = t.throws(() => parseRemoteUrl("svc::http://alice:hunter2@host:notaport/projects/x"));
  t.regex(notUrl?.message ?? "", /"svc::http:\/\/<user:password>@host:notaport\/projects\/x" is not a URL/);
});

test("initCommandFor: the svc init line of each kind, the simulator with its origin", (t) => {
  const line = (url: string) => initCommandFor(parseRemoteUrl(url), "/tmp/my tree");
  t.is(
    line("svc::http://127.0.0.1:7878/projects/demo"),
    'svc init sim::demo "/tmp/my tree" --origin http://127.0.0.1:7878',
  );
  t.is(
    line("svc::https://api.github.com/forge/projects/acme/widgets"),
    'svc init forge::acme/widgets "/tmp/my tree"',
  );
});

// ---------------------------------------------------------------------------------------------------------
// Properties.

/** Strings that look like remote URLs often enough to reach every branch of the parser. */
const urlish = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        "svc::",
        "http://",
        "https://",
        "ftp://",
        "127.0.0.1",
        "localhost",
        "[::1]",
        "acme.atlassian.net",
        ":7878",
        ":",
        "@",
        "user:pw@",
        "/",
        "/projects/",
        "projects",
        "/wiki",
        "/tracker",
        "/forge",
        "%",
        "%2F",
        "%E0",
        "%2e%2e",
        "..",
        "?",
        "#",
        "\\",
      ),
      fc.string({ maxLength: 6 }),
    ),
    { maxLength: 10 },
  )
  .map((parts) => parts.join(""));

/** A known URL form with anything after `/projects/`: escapes, slashes, dot segments. */
const projectTail = fc
  .tuple(
    fc.constantFrom(
      "svc::http://127.0.0.1:7878/projects/",
      "svc::https://acme.atlassian.net/wiki/projects/",
      "svc::https://api.github.com/forge/projects/acme/",
      "svc::https://api.github.com/forge/projects/",
    ),
    fc.array(
      fc.oneof(
        fc.constantFrom("%", "%E0", "%A4", "%C3%A9", "%2F", "%00", "/", ".", ".."),
        fc.string({ maxLength: 4 }),
      ),
      {
        maxLength: 6,
      },
    ),
  )
  .map(([head, parts]) => head + parts.join(""));

test("property: any string is a RemoteUrl or a UserFacingError that names it (or, holding credentials, not)", (t) => {
  fc.assert(
    fc.property(fc.oneof(urlish, projectTail, fc.string({ unit: "binary", maxLength: 60 })), (input) => {
      let remote: RemoteUrl;
      try {
        remote = parseRemoteUrl(input);
      } catch (error) {
        if (!(error instanceof UserFacingError) || error.code !== "SVC_USAGE") throw error;
        // The input is named as it is, or with what stands between :// and an @ masked.
        const masked = input.replace(/^(.*?:\/\/)[^/?#]*@/, "$1<user:password>@");
        return (
          error.message.includes(JSON.stringify(masked)) ||
          error.message.startsWith("a remote URL must not carry a user name or password")
        );
      }
      const url = new URL(remote.url);
      return (
        ["sim", "wiki", "tracker", "forge"].includes(remote.kind) &&
        remote.origin === url.origin &&
        (url.protocol === "http:" || url.protocol === "https:") &&
        url.username === "" &&
        url.password === "" &&
        // A `%2F` in a segment decodes to `/`: the backend's own check of its project refuses it later.
        remote.project !== "" &&
        url.pathname.includes("/projects/")
      );
    }),
    fuzzParams(1000),
  );
  t.pass();
});

/** A path segment's text: anything but `/`, and not `.` or `..`, which URL paths resolve away. */
const segment = fc
  .string({ minLength: 1, maxLength: 12 })
  .filter((text) => !text.includes("/") && text !== "." && text !== "..");

test("property: the URL written for any kind, origin and project reads back as them", (t) => {
  const loopback = fc.constantFrom("127.0.0.1", "localhost", "[::1]", "127.4.5.6");
  const port = fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined });
  const remote = fc.oneof(
    fc.record({
      kind: fc.constant("sim"),
      host: loopback,
      marker: fc.constant(""),
      parts: fc.tuple(segment),
    }),
    fc.record({
      kind: fc.constantFrom("wiki", "tracker"),
      host: fc.oneof(fc.domain(), loopback),
      marker: fc.constantFrom("", "/api", "/a/b"),
      parts: fc.tuple(segment),
    }),
    fc.record({
      kind: fc.constant("forge"),
      host: fc.oneof(fc.domain(), loopback),
      marker: fc.constantFrom("", "/api/v3"),
      parts: fc.tuple(segment, segment),
    }),
  );
  fc.assert(
    fc.property(remote, fc.constantFrom("http", "https"), port, (r, scheme, p) => {
      const origin = `${scheme}://${r.host}${p === undefined ? "" : `:${p}`}`;
      const kindPath = r.kind === "sim" ? "" : `/${r.kind}`;
      const path = `${r.marker}${kindPath}/projects/${r.parts.map(encodeURIComponent).join("/")}`;
      const parsed = parseRemoteUrl(`svc::${origin}${path}`);
      return (
        parsed.kind === r.kind &&
        parsed.origin === new URL(origin).origin &&
        parsed.project === r.parts.join("/") &&
        parsed.url === `${origin}${path}`
      );
    }),
    fuzzParams(500),
  );
  t.pass();
});

test("property: a password in the URL never appears in the refusal", (t) => {
  fc.assert(
    fc.property(fc.string({ maxLength: 10 }), fc.stringMatching(/^[0-9a-f]{8,16}$/), (user, secret) => {
      const password = `S3cret-${secret}`;
      const input = `svc::https://${encodeURIComponent(user)}:${password}@acme.atlassian.net/wiki/projects/DOCS`;
      try {
        parseRemoteUrl(input);
        return false;
      } catch (error) {
        return error instanceof UserFacingError && !error.message.includes(password);
      }
    }),
    fuzzParams(200),
  );
  t.pass();
});

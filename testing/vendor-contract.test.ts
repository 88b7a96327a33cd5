/**
 * The check of the fakes' traffic against the vendors' descriptions (vendor-contract.ts) can fail: for each
 * vendor a request or an answer that departs (a wrong enumerated value, a missing required member, a path
 * no operation has, a value beyond a bound, a member the schema forbids, a status not described) is named
 * by operation and field, with what was expected and what was received; what the description allows is no
 * departure. The schema keywords are enforced by ajv, not skipped; and a fake that saw a departure fails the
 * test that started it, at close().
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import { startFakeForge } from "./fake-forge.js";
import { callFake } from "./fake-http.js";
import { startFakeTracker } from "./fake-tracker.js";
import { basicAuthorization, startFakeWiki } from "./fake-wiki.js";
import { repoRoot } from "./paths.js";
import {
  ContractWatch,
  DELIBERATE_HEADER,
  type Departure,
  describeDeparture,
  type Exchange,
  exchangeDepartures,
} from "./vendor-contract.js";
import { vendorDescription } from "./vendor-descriptions.js";
import { schemaValidator, toJsonSchema } from "./vendor-schema.js";

/** The departures of `exchange` as `operation field: expected …, received …` lines. */
function named(vendor: "github" | "jira" | "confluence", exchange: Exchange): string[] {
  return exchangeDepartures(vendor, exchange).map(
    (departure: Departure) =>
      `${departure.operation} ${departure.field}: expected ${departure.expected}, received ${departure.received}`,
  );
}

const ISSUE = {
  id: 1,
  node_id: "I_1",
  url: "https://api.github.com/repos/acme/widgets/issues/1",
  repository_url: "https://api.github.com/repos/acme/widgets",
  labels_url: "https://api.github.com/repos/acme/widgets/issues/1/labels{/name}",
  comments_url: "https://api.github.com/repos/acme/widgets/issues/1/comments",
  events_url: "https://api.github.com/repos/acme/widgets/issues/1/events",
  html_url: "https://github.com/acme/widgets/issues/1",
  number: 1,
  state: "open",
  state_reason: null,
  title: "A title",
  body: null,
  user: null,
  labels: [{ name: "bug" }],
  assignee: null,
  assignees: [],
  milestone: null,
  locked: false,
  active_lock_reason: null,
  comments: 0,
  closed_at: null,
  created_at: "2025-01-06T09:00:00Z",
  updated_at: "2025-01-06T09:00:00Z",
  author_association: "OWNER",
};

const GET_ISSUE: Exchange = {
  method: "GET",
  path: "/repos/acme/widgets/issues/1",
  body: "",
  status: 200,
  answer: JSON.stringify(ISSUE),
};

test("the descriptions name their title, version and source; the fixtures hold every operation svc uses", (t) => {
  const github = vendorDescription("github");
  const recorded = JSON.parse(
    readFileSync(join(repoRoot, "fixtures", "vendor", "github-rest.json"), "utf8"),
  ) as {
    title: string;
    version: string;
    packageVersion: string;
    operations: Record<string, string[]>;
  };
  t.is(github.title, recorded.title);
  t.is(github.version, recorded.version, "the installed @octokit/openapi is not the one recorded");
  t.is(github.source, `@octokit/openapi ${recorded.packageVersion}, generated/api.github.com.json`);
  for (const id of Object.values(recorded.operations).flat()) t.truthy(github.operation(id), id);
  const jira = vendorDescription("jira");
  t.is(jira.version, "1001.0.0-SNAPSHOT-57a0ca5b4a0bb0ac5f3fee4764acb1c14e4d7e71");
  t.deepEqual(jira.operationIds.sort(), [
    "addComment",
    "countIssues",
    "createIssue",
    "deleteComment",
    "deleteIssue",
    "doTransition",
    "editIssue",
    "getComment",
    "getComments",
    "getCreateIssueMetaIssueTypeId",
    "getCreateIssueMetaIssueTypes",
    "getCurrentUser",
    "getEditIssueMeta",
    "getFields",
    "getIssue",
    "getPriorities",
    "getProject",
    "getTransitions",
    "searchAndReconsileIssuesUsingJql",
    "searchAndReconsileIssuesUsingJqlPost",
    "updateComment",
  ]);
  const confluence = vendorDescription("confluence");
  t.is(confluence.title, "The Confluence Cloud REST API v2");
  t.is(confluence.version, "2.0.0");
  t.deepEqual(confluence.operationIds.sort(), [
    "createBulkUserLookup",
    "createFooterComment",
    "createPage",
    "deleteFooterComment",
    "deletePage",
    "getFooterCommentById",
    "getFooterCommentVersions",
    "getFooterComments",
    "getPageById",
    "getPageFooterComments",
    "getPageLabels",
    "getPagesInSpace",
    "getSpaceById",
    "getSpaces",
    "updateFooterComment",
    "updatePage",
  ]);
  t.deepEqual(
    confluence.unrecorded.map((entry) => `${entry.method} ${entry.template}`),
    [
      "POST /wiki/rest/api/content/{id}/label",
      "GET /wiki/rest/api/content/{id}/label",
      "GET /wiki/rest/api/user/current",
    ],
  );
});

test("GitHub: an issue as described passes; each departure names the operation and the field", (t) => {
  t.deepEqual(named("github", GET_ISSUE), []);
  const cases: [Partial<Exchange>, string][] = [
    [
      { answer: JSON.stringify({ ...ISSUE, state_reason: "wontfix" }) },
      'issues/get answer body (200) /state_reason: expected one of … received "wontfix"',
    ],
    [
      { answer: JSON.stringify({ ...ISSUE, number: undefined }) },
      "issues/get answer body (200) /number: expected present (required), received nothing",
    ],
    [
      { answer: JSON.stringify({ ...ISSUE, created_at: "yesterday" }) },
      'issues/get answer body (200) /created_at: expected must match format "date-time", received "yesterday"',
    ],
    [
      { answer: JSON.stringify({ ...ISSUE, labels: "bug" }) },
      'issues/get answer body (200) /labels: expected type "array", received "bug"',
    ],
    [
      { status: 418 },
      'issues/get answer status: expected one of ["200","301","304","404","410"], received 418',
    ],
    [
      { path: "/repos/acme/widgets/issues/one" },
      'issues/get path parameter issue_number: expected type "integer", received "one"',
    ],
    [
      { path: "/repos/acme/widgets/issues/1/everything" },
      "(none) path: expected an operation of GitHub's official OpenAPI spec + Octokit extension 23.0.2, received GET /repos/acme/widgets/issues/1/everything, which none has",
    ],
    [
      { path: "/repos/acme/widgets/issues/1?verbose=1" },
      'issues/get query parameter verbose: expected none of that name (the operation has []), received ["1"]',
    ],
  ];
  for (const [change, expected] of cases) {
    const found = named("github", { ...GET_ISSUE, ...change });
    const [head, tail] = expected.split(" … ");
    t.true(
      found.some((line) => line.startsWith(head as string) && (tail === undefined || line.includes(tail))),
      `${JSON.stringify(change).slice(0, 80)}\n${found.join("\n")}`,
    );
  }
  // The listing: an enumerated query value, and the Link header it describes.
  const list: Exchange = {
    method: "GET",
    path: "/repos/acme/widgets/issues?state=all&per_page=100&page=2",
    body: "",
    status: 200,
    answerHeaders: { link: '<https://api.github.com/repositories/1/issues?page=3>; rel="next"' },
    answer: JSON.stringify([ISSUE]),
  };
  t.deepEqual(named("github", list), []);
  t.deepEqual(named("github", { ...list, path: "/repositories/1296269/issues?state=all&page=3" }), []);
  t.deepEqual(named("github", { ...list, path: "/repos/acme/widgets/issues?state=every" }), [
    'issues/list-for-repo query parameter state: expected one of ["open","closed","all"], received "every"',
  ]);
  // A request body: an enumerated member, and a required one.
  const update: Exchange = {
    method: "PATCH",
    path: "/repos/acme/widgets/issues/1",
    body: JSON.stringify({ state: "closed", state_reason: "not_planned" }),
    status: 200,
    answer: JSON.stringify({ ...ISSUE, state: "closed", state_reason: "not_planned" }),
  };
  t.deepEqual(named("github", update), []);
  t.deepEqual(
    named("github", { ...update, body: JSON.stringify({ state: "closed", state_reason: "wontfix" }) }),
    [
      'issues/update request body /state_reason: expected one of ["completed","not_planned","duplicate","reopened",null], received "wontfix"',
    ],
  );
  t.deepEqual(
    named("github", {
      ...update,
      method: "POST",
      path: "/repos/acme/widgets/issues",
      status: 201,
      body: "{}",
    }),
    ["issues/create request body /title: expected present (required), received nothing"],
  );
  // Answers any operation may give, from GitHub's guides: a 304 to a conditional GET, a 401, rate limits.
  t.deepEqual(named("github", { ...GET_ISSUE, status: 304, answer: "" }), []);
  const badCredentials = { message: "Bad credentials", documentation_url: "https://docs.github.com/rest" };
  t.deepEqual(named("github", { ...list, status: 401, answer: JSON.stringify(badCredentials) }), []);
  t.deepEqual(named("github", { ...list, status: 403, answer: JSON.stringify({ message: 7 }) }), [
    'issues/list-for-repo answer body (403) /message: expected type "string", received 7',
  ]);
});

const COUNT: Exchange = {
  method: "POST",
  path: "/rest/api/3/search/approximate-count",
  body: '{"jql":"project = \\"TEST\\" ORDER BY key ASC"}',
  status: 200,
  answer: '{"count":153}',
};

test("Jira: the recorded operations judge requests and answers; each departure names the operation and the field", (t) => {
  t.deepEqual(named("jira", COUNT), []);
  const cases: [Partial<Exchange>, string[]][] = [
    [
      { body: '{"jql":"project = TEST","maxResults":1}' },
      [
        "countIssues request body /maxResults: expected no such member (the schema allows no other members), received 1",
      ],
    ],
    [{ body: '{"jql":42}' }, ['countIssues request body /jql: expected type "string", received 42']],
    [{ body: "" }, ["countIssues request body: expected a body (required), received nothing"]],
    [{ body: "jql=x" }, ['countIssues request body: expected JSON, received "jql=x"']],
    [
      { answer: '{"count":"153"}' },
      ['countIssues answer body (200) /count: expected type "integer", received "153"'],
    ],
    [
      { answer: '{"count":153,"total":153}' },
      [
        "countIssues answer body (200) /total: expected no such member (the schema allows no other members), received 153",
      ],
    ],
    [
      { status: 404, answer: "" },
      ['countIssues answer status: expected one of ["200","400","401"], received 404'],
    ],
    [
      { path: `${COUNT.path}?validate=true` },
      [
        'countIssues query parameter validate: expected none of that name (the operation has []), received ["true"]',
      ],
    ],
    [
      { method: "GET", path: "/rest/api/3/issue/TEST-1/worklog" },
      [
        "(none) path: expected an operation of The Jira Cloud platform REST API 1001.0.0-SNAPSHOT-57a0ca5b4a0bb0ac5f3fee4764acb1c14e4d7e71, received GET /rest/api/3/issue/TEST-1/worklog, which none has",
      ],
    ],
  ];
  for (const [change, expected] of cases)
    t.deepEqual(named("jira", { ...COUNT, ...change }), expected, JSON.stringify(change));
  // A 400 has no schema in the description: its body is not judged. A 429 is documented for every operation.
  t.deepEqual(named("jira", { ...COUNT, status: 400, answer: '{"errorMessages":["x"],"errors":{}}' }), []);
  t.deepEqual(named("jira", { ...COUNT, status: 429, answer: "" }), []);
  // A boolean query parameter, and a required enumerated member of a transition.
  const transitions: Exchange = {
    method: "GET",
    path: "/rest/api/3/issue/TEST-1/transitions?includeUnavailableTransitions=maybe",
    body: "",
    status: 200,
    answer: JSON.stringify({ transitions: [] }),
  };
  t.deepEqual(named("jira", transitions), [
    'getTransitions query parameter includeUnavailableTransitions: expected type "boolean", received "maybe"',
  ]);
});

const PAGES = "/wiki/api/v2/spaces/98305/pages";
const PAGE = {
  id: "42",
  status: "current",
  title: "A page",
  spaceId: "98305",
  parentId: null,
  parentType: null,
  position: 0,
  authorId: "a",
  ownerId: "a",
  lastOwnerId: null,
  createdAt: "2025-01-06T09:00:00.000Z",
  version: { number: 3, createdAt: "2025-01-07T10:00:00.000Z", message: "", minorEdit: false, authorId: "a" },
  body: {},
  _links: { webui: "/spaces/SVC/pages/42/A+page", editui: "/e", tinyui: "/x/Kg" },
};

test("Confluence: repeated status values, the limit's bounds, the page shape; each departure named", (t) => {
  const ok: Exchange = {
    method: "GET",
    path: `${PAGES}?status=trashed&status=deleted&status=archived&sort=-modified-date&limit=250`,
    body: "",
    status: 200,
    answer: JSON.stringify({
      results: [PAGE],
      _links: { next: `${PAGES}?cursor=x`, base: "https://x/wiki" },
    }),
  };
  t.deepEqual(named("confluence", ok), []);
  const cases: [Partial<Exchange>, string][] = [
    [
      { path: `${PAGES}?status=trashed,deleted` },
      'getPagesInSpace query parameter status /0: expected one of ["current","archived","deleted","trashed"], received "trashed,deleted"',
    ],
    [
      { path: `${PAGES}?limit=251` },
      "getPagesInSpace query parameter limit: expected must be <= 250, received 251",
    ],
    [
      { path: `${PAGES}?limit=0` },
      "getPagesInSpace query parameter limit: expected must be >= 1, received 0",
    ],
    [
      { path: `${PAGES}?limit=1&limit=2` },
      'getPagesInSpace query parameter limit: expected one value, received 2: ["1","2"]',
    ],
    [
      { path: "/wiki/api/v2/spaces/SVC/pages" },
      'getPagesInSpace path parameter id: expected type "integer", received "SVC"',
    ],
    [
      { answer: JSON.stringify({ results: [{ ...PAGE, status: "gone" }] }) },
      'getPagesInSpace answer body (200) /results/0/status: expected one of ["current","draft","archived","historical","trashed","deleted","any"], received "gone"',
    ],
    [
      { answer: JSON.stringify({ results: [{ ...PAGE, version: { number: "3" } }] }) },
      'getPagesInSpace answer body (200) /results/0/version/number: expected type "integer", received "3"',
    ],
    [
      { answer: JSON.stringify({ results: {} }) },
      'getPagesInSpace answer body (200) /results: expected type "array", received {}',
    ],
    [
      { body: "{}" },
      'getPagesInSpace request body: expected no body (the operation takes none), received "{}"',
    ],
    [
      { method: "POST", path: "/wiki/rest/api/content/42/labels" },
      "(none) path: expected an operation of The Confluence Cloud REST API v2 2.0.0, received POST /wiki/rest/api/content/42/labels, which none has",
    ],
  ];
  for (const [change, expected] of cases) {
    const found = named("confluence", { ...ok, ...change });
    t.true(found.includes(expected), `${JSON.stringify(change)}\n${found.join("\n")}`);
  }
  // The v1 label operation the contract suite calls is let through, as the fixture says why.
  t.deepEqual(
    named("confluence", { ...ok, method: "POST", path: "/wiki/rest/api/content/42/label", body: "[]" }),
    [],
  );
});

test("OpenAPI 3.0 read as JSON Schema: nullable without a type, boolean exclusive bounds, readOnly members in requests", (t) => {
  const ajv = schemaValidator();
  const nullableRef = ajv.compile(
    toJsonSchema({ allOf: [{ type: "object", required: ["id"] }], nullable: true }, "answer") as object,
  );
  t.true(nullableRef(null));
  t.true(nullableRef({ id: 1 }));
  t.false(nullableRef({}));
  const exclusive = ajv.compile(
    toJsonSchema({ type: "integer", minimum: 0, exclusiveMinimum: true }, "request") as object,
  );
  t.false(exclusive(0));
  t.true(exclusive(1));
  const readOnly = {
    type: "object",
    required: ["id", "name"],
    properties: { id: { type: "string", readOnly: true }, name: { type: "string" } },
  };
  t.true(ajv.compile(toJsonSchema(readOnly, "request") as object)({ name: "x" }));
  t.false(ajv.compile(toJsonSchema(readOnly, "answer") as object)({ name: "x" }));
  const enumNullable = ajv.compile(
    toJsonSchema({ type: "string", enum: ["a"], nullable: true }, "answer") as object,
  );
  t.true(enumNullable(null));
  t.false(enumNullable("b"));
  // A format the check does not know fails the compilation rather than passing every value.
  t.throws(() => ajv.compile({ type: "string", format: "no-such-format" }), {
    message: /unknown format "no-such-format"/,
  });
  // Keywords beside the ones OpenAPI adds are enforced, not skipped.
  for (const [schema, bad] of [
    [{ type: "string", pattern: "^a" }, "b"],
    [{ type: "string", maxLength: 2 }, "abc"],
    [{ type: "array", maxItems: 1 }, [1, 2]],
    [{ type: "array", uniqueItems: true }, [1, 1]],
    [{ type: "integer", format: "int32" }, 2 ** 31],
    [{ oneOf: [{ type: "string" }, { type: "integer" }] }, true],
    [{ type: "object", additionalProperties: false, properties: {} }, { x: 1 }],
  ] as const)
    t.false(ajv.compile(toJsonSchema(schema, "answer") as object)(bad), JSON.stringify(schema));
});

test("a watch keeps a deliberate exchange aside, judges the others, and its assertion names each departure", (t) => {
  const watch = new ContractWatch("jira");
  watch.observe({ ...COUNT, body: '{"jql":42}', requestHeaders: { [DELIBERATE_HEADER]: "to see the 400" } });
  watch.observe(COUNT);
  t.notThrows(() => watch.assertNone());
  t.is(watch.deliberate[0]?.why, "to see the 400");
  t.is(watch.operations.get("countIssues"), 1);
  watch.observe({ ...COUNT, answer: '{"count":-1.5}' });
  const error = t.throws(() => watch.assertNone());
  t.regex(
    error?.message ?? "",
    /^the fake's traffic departs from The Jira Cloud platform REST API 1001\.0\.0-SNAPSHOT-\S+ \(fixtures\/vendor\/jira-platform-v3\.json .*\):\n- countIssues \(POST \/rest\/api\/3\/search\/approximate-count\): answer body \(200\) \/count: expected type "integer", received -1\.5\n/,
  );
  t.is(
    describeDeparture(exchangeDepartures("jira", { ...COUNT, answer: '{"count":-1.5}' })[0] as Departure),
    'countIssues (POST /rest/api/3/search/approximate-count): answer body (200) /count: expected type "integer", received -1.5',
  );
});

test("each fake fails at close() when svc's side of the traffic departs, naming operation and field", async (t) => {
  const forge = await startFakeForge();
  const wrongState = await callFake(forge.url, "GET", "/repos/acme/widgets/issues?state=every", {
    authorization: `Bearer ${forge.token}`,
    headers: {},
  });
  t.is(wrongState.status, 422);
  await t.throwsAsync(forge.close(), {
    message:
      /issues\/list-for-repo \(GET \/repos\/\{owner\}\/\{repo\}\/issues\): query parameter state: expected one of \["open","closed","all"\], received "every"/,
  });

  const tracker = await startFakeTracker();
  const auth = `Basic ${Buffer.from(`${tracker.email}:${tracker.apiToken}`).toString("base64")}`;
  await callFake(
    tracker.url,
    "POST",
    "/rest/api/3/search/approximate-count",
    { authorization: auth, headers: {} },
    {
      json: { jql: "project = TEST", maxResults: 1 },
    },
  );
  await t.throwsAsync(tracker.close(), {
    message:
      /countIssues \(POST \/rest\/api\/3\/search\/approximate-count\): request body \/maxResults: expected no such member/,
  });

  const wiki = await startFakeWiki();
  const authorization = basicAuthorization(wiki.credentials.email, wiki.credentials.token);
  await callFake(wiki.url, "GET", `/wiki/api/v2/spaces/${wiki.space("SVC").id}/pages?limit=0`, {
    authorization,
    headers: {},
  });
  await callFake(wiki.url, "GET", "/wiki/api/v2/folders/1", { authorization, headers: {} });
  const error = await t.throwsAsync(wiki.close());
  t.regex(
    error?.message ?? "",
    /getPagesInSpace \(GET \/wiki\/api\/v2\/spaces\/\{id\}\/pages\): query parameter limit: expected must be >= 1, received 0/,
  );
  t.regex(
    error?.message ?? "",
    /\(none\) \(GET \/wiki\/api\/v2\/folders\/1\): path: expected an operation of The Confluence Cloud REST API v2 2\.0\.0/,
  );
});

/**
 * The check of the fakes' traffic against the recorded vendor operations (vendor-contract.ts) finds what it
 * is for: a request or an answer the description does not allow is a problem, named; one it allows is none.
 * And the recording script keeps an operation, the schemas it reaches and the amendments, nothing more.
 */
import test from "ava";
import { recordOperations } from "../scripts/record-vendor-operations.js";
import {
  schemaProblems,
  type VendorExchange,
  type VendorOperations,
  vendorOperations,
  vendorProblems,
} from "./vendor-contract.js";

const jira = vendorOperations("jira-platform-v3");
const confluence = vendorOperations("confluence-v2");

const COUNT: VendorExchange = {
  method: "POST",
  path: "/rest/api/3/search/approximate-count",
  body: '{"jql":"project = \\"TEST\\" ORDER BY key ASC"}',
  status: 200,
  answer: '{"count":153}',
};

const PAGES = "/wiki/api/v2/spaces/98305/pages";
const PAGE = {
  id: "42",
  status: "trashed",
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

test("the recorded operations name the description and its version", (t) => {
  t.is(jira.version, "1001.0.0-SNAPSHOT-57a0ca5b4a0bb0ac5f3fee4764acb1c14e4d7e71");
  t.is(confluence.version, "2.0.0");
  t.is(jira.operations.countIssues?.path, "/rest/api/3/search/approximate-count");
  t.is(confluence.operations.getPagesInSpace?.path, "/wiki/api/v2/spaces/{id}/pages");
});

test("a count request and answer as the description says have no problem; each departure is named", (t) => {
  t.deepEqual(vendorProblems(jira, COUNT), []);
  const cases: [Partial<VendorExchange>, RegExp][] = [
    [
      { body: '{"jql":"project = TEST","maxResults":1}' },
      /request body\.maxResults: not a member the description allows/,
    ],
    [{ body: '{"jql":42}' }, /request body\.jql: integer where the description says string/],
    [{ body: "" }, /the request has no body; the description requires one/],
    [{ body: "jql=x" }, /request body is not JSON/],
    [{ answer: '{"count":"153"}' }, /answer\.count: string where the description says integer/],
    [{ answer: '{"count":153,"total":153}' }, /answer\.total: not a member the description allows/],
    [{ answer: '{"count":1.5}' }, /answer\.count: number where the description says integer/],
    [{ status: 404, answer: "" }, /the answer's status 404 is not one the description has/],
    [{ path: `${COUNT.path}?validate=true` }, /query parameter validate is not one the description has/],
  ];
  for (const [change, problem] of cases) {
    const problems = vendorProblems(jira, { ...COUNT, ...change }) ?? [];
    t.true(
      problems.length > 0 && problems.every((text) => text.startsWith("countIssues (POST ")),
      JSON.stringify(change),
    );
    t.regex(problems.join("\n"), problem);
  }
  // A 400 has no schema in the description: its body is not checked.
  t.deepEqual(
    vendorProblems(jira, { ...COUNT, status: 400, answer: '{"errorMessages":["x"],"errors":{}}' }),
    [],
  );
  t.is(
    vendorProblems(jira, { ...COUNT, method: "GET" }),
    undefined,
    "an operation not recorded is not checked",
  );
});

test("the space pages listing: repeated status values, the sort and limit ranges, the page shape", (t) => {
  const ok: VendorExchange = {
    method: "GET",
    path: `${PAGES}?status=trashed&status=deleted&status=archived&sort=-modified-date&limit=250`,
    body: "",
    status: 200,
    answer: JSON.stringify({
      results: [PAGE],
      _links: { next: `${PAGES}?cursor=x`, base: "https://x/wiki" },
    }),
  };
  t.deepEqual(vendorProblems(confluence, ok), []);
  const cases: [Partial<VendorExchange>, RegExp][] = [
    [{ path: `${PAGES}?status=trashed,deleted` }, /"trashed,deleted" is none of/],
    [{ path: `${PAGES}?status=gone` }, /query parameter status\[0\]: "gone" is none of/],
    [{ path: `${PAGES}?limit=251` }, /query parameter limit: 251 is above the maximum 250/],
    [{ path: `${PAGES}?limit=0` }, /query parameter limit: 0 is below the minimum 1/],
    [{ path: `${PAGES}?sort=modified` }, /query parameter sort: "modified" is none of/],
    [{ path: `${PAGES}?limit=1&limit=2` }, /query parameter limit is repeated/],
    [
      { path: "/wiki/api/v2/spaces/SVC/pages" },
      /path parameter id: string where the description says integer/,
    ],
    [
      { answer: JSON.stringify({ results: [{ ...PAGE, status: "gone" }] }) },
      /answer\.results\[0\]\.status: "gone" is none of/,
    ],
    [
      { answer: JSON.stringify({ results: [{ ...PAGE, version: { number: "3" } }] }) },
      /answer\.results\[0\]\.version\.number: string where the description says integer/,
    ],
    [{ answer: JSON.stringify({ results: {} }) }, /answer\.results: object where the description says array/],
    [{ body: "{}" }, /the request has a body; the description gives it none/],
  ];
  for (const [change, problem] of cases) {
    t.regex(
      (vendorProblems(confluence, { ...ok, ...change }) ?? []).join("\n"),
      problem,
      JSON.stringify(change),
    );
  }
});

test("schemaProblems: allOf, nullable, required, int32 and a keyword it does not read", (t) => {
  const schemas = { Named: { type: "object", required: ["id"], properties: { id: { type: "string" } } } };
  t.deepEqual(
    schemaProblems({ allOf: [{ $ref: "#/components/schemas/Named" }] }, { id: "1" }, "v", schemas),
    [],
  );
  t.deepEqual(schemaProblems({ allOf: [{ $ref: "#/components/schemas/Named" }] }, {}, "v", schemas), [
    "v: the required member id is missing",
  ]);
  t.deepEqual(schemaProblems({ type: "string", nullable: true }, null, "v", schemas), []);
  t.deepEqual(schemaProblems({ type: "string" }, null, "v", schemas), [
    "v: null where the description says string",
  ]);
  t.deepEqual(schemaProblems({ type: "integer", format: "int32" }, 2 ** 31, "v", schemas), [
    "v: 2147483648 is outside int32",
  ]);
  t.deepEqual(schemaProblems({ oneOf: [{ type: "string" }] }, "x", "v", schemas), [
    "v: the schema uses oneOf, which this check does not read",
  ]);
  t.deepEqual(schemaProblems({ $ref: "#/components/schemas/Other" }, "x", "v", schemas), [
    "v: #/components/schemas/Other is not recorded",
  ]);
});

test("the recording keeps the operations asked for, the schemas they reach, the base path and the amendments", (t) => {
  const document = {
    info: { title: "T", version: "9" },
    servers: [{ url: "https://{your-domain}/wiki/api/v2" }],
    paths: {
      "/spaces/{id}/pages": {
        get: {
          operationId: "getPagesInSpace",
          description: "dropped",
          parameters: [{ $ref: "#/components/parameters/Limit" }],
          responses: {
            "200": { content: { "application/json": { schema: { $ref: "#/components/schemas/PageBulk" } } } },
          },
        },
      },
      "/pages": { get: { operationId: "getPages", responses: {} } },
    },
    components: {
      parameters: { Limit: { name: "limit", in: "query", schema: { type: "integer", maximum: 250 } } },
      schemas: {
        PageBulk: {
          type: "object",
          properties: {
            parentId: { type: "string", description: "or null" },
            parentType: { type: "string" },
            description: { type: "string" },
          },
        },
        Unused: { type: "string" },
      },
    },
  };
  const recorded = recordOperations(
    document,
    ["getPagesInSpace"],
    "t.json",
  ) as unknown as VendorOperations & {
    amendments: { property: string }[];
  };
  t.deepEqual(Object.keys(recorded.operations), ["getPagesInSpace"]);
  t.deepEqual(recorded.operations.getPagesInSpace?.parameters, [
    { name: "limit", in: "query", schema: { type: "integer", maximum: 250 } },
  ]);
  t.is(recorded.operations.getPagesInSpace?.path, "/wiki/api/v2/spaces/{id}/pages");
  t.deepEqual(Object.keys(recorded.schemas), ["PageBulk"]);
  t.deepEqual(recorded.schemas.PageBulk, {
    type: "object",
    properties: {
      parentId: { type: "string", nullable: true },
      parentType: { type: "string", nullable: true },
      description: { type: "string" },
    },
  });
  t.deepEqual(
    recorded.amendments.map((amendment) => amendment.property),
    ["parentId", "parentType"],
  );
  t.throws(() => recordOperations(document, ["nope"], "t.json"), { message: "not in the description: nope" });
});

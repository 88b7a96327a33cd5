/**
 * The recording keeps the operations asked for (with their request bodies and answers resolved), the
 * component schemas they reach, the base path, the amendments and the unrecorded operations the fixture
 * lets through, nothing more.
 */
import test from "ava";
import { recordOperations } from "./record-vendor-operations.js";

const DOCUMENT = {
  info: { title: "The Confluence Cloud REST API v2", version: "9" },
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
    "/pages": {
      get: { operationId: "getPages", responses: {} },
      post: {
        operationId: "createPage",
        requestBody: { $ref: "#/components/requestBodies/PageCreateRequest" },
        responses: { "200": { $ref: "#/components/responses/Page" } },
      },
    },
  },
  components: {
    parameters: { Limit: { name: "limit", in: "query", schema: { type: "integer", maximum: 250 } } },
    requestBodies: {
      PageCreateRequest: {
        required: true,
        content: {
          "application/json": {
            schema: {
              type: "object",
              properties: { body: { oneOf: [{ type: "object" }, { type: "object" }] } },
            },
          },
        },
      },
    },
    responses: {
      Page: { description: "dropped", content: { "application/json": { schema: { type: "object" } } } },
    },
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

interface Recorded {
  operations: Record<
    string,
    { path: string; parameters: unknown; requestBody?: unknown; responses: unknown }
  >;
  schemas: Record<string, unknown>;
  amendments: { property: string; change: string }[];
  unrecorded: { operationId: string }[];
}

test("the recording keeps the operations asked for, the schemas they reach, the base path and the amendments", (t) => {
  const recorded = recordOperations(
    DOCUMENT,
    ["getPagesInSpace", "createPage"],
    "t.json",
  ) as unknown as Recorded;
  t.deepEqual(Object.keys(recorded.operations), ["getPagesInSpace", "createPage"]);
  t.deepEqual(recorded.operations.getPagesInSpace?.parameters, [
    { name: "limit", in: "query", schema: { type: "integer", maximum: 250 } },
  ]);
  t.is(recorded.operations.getPagesInSpace?.path, "/wiki/api/v2/spaces/{id}/pages");
  // Request bodies and answers named by $ref are recorded as what they name; the oneOf amended to anyOf.
  t.deepEqual(recorded.operations.createPage?.requestBody, {
    required: true,
    content: {
      "application/json": {
        schema: { type: "object", properties: { body: { anyOf: [{ type: "object" }, { type: "object" }] } } },
      },
    },
  });
  t.deepEqual(recorded.operations.createPage?.responses, {
    "200": { content: { "application/json": { schema: { type: "object" } } } },
  });
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
    recorded.amendments.map((amendment) => `${amendment.property} ${amendment.change}`),
    ["parentId nullable", "parentType nullable", "body anyOf"],
  );
  t.deepEqual(
    recorded.unrecorded.map((entry) => entry.operationId),
    ["addLabelsToContent", "getLabelsForContent", "getCurrentUser"],
  );
  t.throws(() => recordOperations(DOCUMENT, ["nope"], "t.json"), { message: "not in the description: nope" });
});

/**
 * The fake tracker judges descriptions by Atlassian's ADF schema (adf-schema.ts): a document the schema
 * refuses is answered as Jira answers a description that is no document, a 400 with an `ErrorCollection`
 * (`{"errorMessages": [], "errors": {"description": "…"}}`, the shape of the Jira platform description's
 * `ErrorCollection`), and nothing is written; a valid one is stored as sent.
 */
import test from "ava";
import { adfSchemaProblem } from "./adf-schema.js";
import { callFake } from "./fake-http.js";
import { givenFakeTracker } from "./fake-tracker.js";

const NOT_ADF = "Operation value must be an Atlassian Document (see the Atlassian Document Format)";

test("a description the ADF schema refuses is a 400 ErrorCollection naming the field; a valid one is stored", async (t) => {
  const tracker = await givenFakeTracker(t);
  const issue = tracker.addIssue("TEST", { summary: "Seed", description: null });
  const put = (description: unknown) =>
    callFake(
      tracker.url,
      "PUT",
      `/rest/api/3/issue/${issue.key}`,
      {
        authorization: `Basic ${Buffer.from(`${tracker.email}:${tracker.apiToken}`).toString("base64")}`,
        headers: { accept: "application/json" },
      },
      { json: { fields: { description } } },
    );
  const invalid = {
    type: "doc",
    version: 1,
    content: [
      {
        type: "paragraph",
        content: [{ type: "text", text: "x", marks: [{ type: "strong" }, { type: "code" }] }],
      },
    ],
  };
  t.truthy(adfSchemaProblem(invalid));
  const refused = await put(invalid);
  t.is(refused.status, 400);
  const body = refused.json<{ errorMessages: unknown; errors: Record<string, string> }>();
  t.deepEqual(Object.keys(body).sort(), ["errorMessages", "errors"]);
  t.deepEqual(body.errorMessages, []);
  t.deepEqual(Object.keys(body.errors), ["description"]);
  t.true(body.errors.description?.startsWith(`${NOT_ADF}: `));
  t.is(tracker.issue(issue.key)?.description, null);

  const valid = {
    type: "doc",
    version: 1,
    content: [{ type: "paragraph", content: [{ type: "text", text: "x" }] }],
  };
  t.is((await put(valid)).status, 204);
  t.deepEqual(tracker.issue(issue.key)?.description, valid);
});

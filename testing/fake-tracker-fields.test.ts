/**
 * The fake tracker's fields of issue 35, through plain `fetch`, in Jira's shapes: the field list, an issue's
 * edit metadata with allowed values, components, fix versions, due date, reporter, resolution and custom
 * values on an issue, and edits of them (a value not allowed, a field off the edit screen: 400); an issue
 * type's create screen, in pages, and a create setting a field off it (400).
 */
import test from "ava";
import { callFake, type FakeCallOptions } from "./fake-http.js";
import { type FakeTracker, givenFakeTracker } from "./fake-tracker.js";

function call(tracker: FakeTracker, method: string, path: string, options: FakeCallOptions = {}) {
  const authorization = `Basic ${Buffer.from(`${tracker.email}:${tracker.apiToken}`).toString("base64")}`;
  return callFake(
    tracker.url,
    method,
    path,
    { authorization, headers: { accept: "application/json" } },
    options,
  );
}

type Json = Record<string, unknown>;

test("the field list and an issue's edit metadata, with the allowed values of the closed fields", async (t) => {
  const tracker = await givenFakeTracker(t, {
    customFields: [
      { id: "customfield_10016", name: "Story Points", kind: "number" },
      { id: "customfield_10050", name: "Team", kind: "option", options: ["Core", "Web"] },
      { id: "customfield_10100", name: "Approver", kind: "string", onEditScreen: false },
    ],
  });
  tracker.addIssue("TEST", { summary: "One" });
  const fields = (await call(tracker, "GET", "/rest/api/3/field")).json<Json[]>();
  t.like(
    fields.find((entry) => entry.id === "customfield_10016"),
    { name: "Story Points", custom: true, schema: { type: "number", customId: 10016 } },
  );
  t.like(
    fields.find((entry) => entry.id === "duedate"),
    { custom: false, schema: { type: "date" } },
  );

  const meta = (await call(tracker, "GET", "/rest/api/3/issue/TEST-1/editmeta")).json<{ fields: Json }>();
  t.like(meta.fields.customfield_10050, { key: "customfield_10050", operations: ["set"], required: false });
  const team = meta.fields.customfield_10050 as { allowedValues: Json[] };
  t.deepEqual(
    team.allowedValues.map((value) => value.value),
    ["Core", "Web"],
  );
  const components = meta.fields.components as { allowedValues: Json[] };
  t.deepEqual(
    components.allowedValues.map((value) => value.name),
    ["API", "Web", "CLI"],
  );
  t.is(meta.fields.customfield_10100, undefined, "off the edit screen");
  t.is(meta.fields.resolution, undefined);
});

test("edits set components, fix versions, the due date and custom values; a value not allowed or a field off the screen is a 400", async (t) => {
  const tracker = await givenFakeTracker(t, {
    customFields: [
      { id: "customfield_10016", name: "Story Points", kind: "number" },
      { id: "customfield_10050", name: "Team", kind: "option", options: ["Core", "Web"] },
      { id: "customfield_10100", name: "Approver", kind: "string", onEditScreen: false },
    ],
  });
  tracker.addIssue("TEST", { summary: "One", reporter: "557058:alice-0002", resolution: "Done" });
  const put = (fields: Json) => call(tracker, "PUT", "/rest/api/3/issue/TEST-1", { json: { fields } });
  t.is(
    (
      await put({
        customfield_10016: 5,
        customfield_10050: { value: "Core" },
        components: [{ name: "API" }, { name: "Web" }],
        fixVersions: [{ name: "2.0" }],
        duedate: "2026-12-24",
      })
    ).status,
    204,
  );
  const issue = tracker.issue("TEST-1");
  t.like(issue, {
    components: ["API", "Web"],
    fixVersions: ["2.0"],
    duedate: "2026-12-24",
    reporter: "557058:alice-0002",
    resolution: "Done",
    custom: { customfield_10016: 5, customfield_10050: "Core" },
  });
  const got = (
    await call(tracker, "GET", "/rest/api/3/issue/TEST-1?fields=customfield_10050,components,reporter")
  ).json<{ fields: Json }>();
  t.deepEqual(Object.keys(got.fields).sort(), ["components", "customfield_10050", "reporter"]);
  t.like(got.fields.customfield_10050, { value: "Core" });
  t.like(got.fields.reporter, { accountId: "557058:alice-0002" });

  const refused = await put({ customfield_10050: { value: "Nobody" }, customfield_10100: "x" });
  t.is(refused.status, 400);
  t.like(refused.json<Json>(), {
    errors: {
      customfield_10050: "Option value 'Nobody' is not valid",
      customfield_10100:
        "Field 'customfield_10100' cannot be set. It is not on the appropriate screen, or unknown.",
    },
  });
  t.is(tracker.issue("TEST-1")?.custom.customfield_10050, "Core");
});

test("an issue type's create screen, in pages, with the allowed values; a create setting a field off it is a 400", async (t) => {
  const tracker = await givenFakeTracker(t, {
    metaPageSize: 4,
    customFields: [
      { id: "customfield_10050", name: "Team", kind: "option", options: ["Core", "Web"] },
      { id: "customfield_10100", name: "Approver", kind: "string", onCreateScreen: false },
    ],
  });
  const base = "/rest/api/3/issue/createmeta/TEST/issuetypes/10001";
  const fields: Json[] = [];
  for (let startAt = 0; ; ) {
    const page = (await call(tracker, "GET", `${base}?startAt=${startAt}&maxResults=200`)).json<{
      fields: Json[];
      startAt: number;
      maxResults: number;
      total: number;
    }>();
    t.like(page, { startAt, maxResults: 4 });
    t.true(page.fields.length <= 4);
    fields.push(...page.fields);
    startAt += page.fields.length;
    if (page.fields.length === 0 || startAt >= page.total) break;
  }
  const byId = new Map(fields.map((field) => [field.fieldId, field]));
  t.like(byId.get("summary"), { key: "summary", required: true, operations: ["set"] });
  t.deepEqual(
    ((byId.get("customfield_10050")?.allowedValues ?? []) as Json[]).map((value) => value.value),
    ["Core", "Web"],
  );
  t.deepEqual(
    ((byId.get("components")?.allowedValues ?? []) as Json[]).map((value) => value.name),
    ["API", "Web", "CLI"],
  );
  t.false(byId.has("customfield_10100"), "off the create screen");
  const over = { deliberate: "a maxResults past the description's maximum, to see its documented 400" };
  t.is((await call(tracker, "GET", `${base}?maxResults=201`, over)).status, 400);
  t.is((await call(tracker, "GET", "/rest/api/3/issue/createmeta/TEST/issuetypes/99")).status, 400);

  const refused = await call(tracker, "POST", "/rest/api/3/issue", {
    json: {
      fields: {
        project: { key: "TEST" },
        issuetype: { id: "10001" },
        summary: "New",
        customfield_10100: "x",
      },
    },
  });
  t.is(refused.status, 400);
  t.like(refused.json<Json>(), {
    errors: {
      customfield_10100:
        "Field 'customfield_10100' cannot be set. It is not on the appropriate screen, or unknown.",
    },
  });
});

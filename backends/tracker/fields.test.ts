/**
 * The tracker's custom fields (issue 35): slugs and their collision rule (a pure function of the field
 * list), and each value mapping from the wire to a file and back.
 */
import test from "ava";
import { FieldCatalog, readExtraFields } from "./field-catalog.js";
import {
  canonicalJson,
  customFields,
  mappingOf,
  readCustomValue,
  slugOf,
  writeCustomValue,
} from "./fields.js";

const custom = (id: string, name: string, type = "number", extra: Record<string, string> = {}) => ({
  id,
  name,
  custom: true,
  schema: { type, ...extra },
});

test("slugs: lowercase, runs of other characters become _, trimmed", (t) => {
  t.is(slugOf("Story Points"), "story_points");
  t.is(slugOf("Team"), "team");
  t.is(slugOf("  Área / Sub-area (v2) "), "rea_sub_area_v2");
  t.is(slugOf("!!!"), "");
});

test("collisions: fixed names win, the lowest id keeps a shared slug, an empty slug is field_<n>", (t) => {
  const list = [
    custom("customfield_10060", "team"),
    custom("customfield_10050", "Team"),
    custom("customfield_10090", "Labels"),
    custom("customfield_10100", "???"),
    { id: "summary", name: "Summary", custom: false },
    custom("com.app.field", "App field"),
  ];
  const slugs = customFields(list).map((field) => [field.id, field.slug]);
  t.deepEqual(slugs, [
    ["customfield_10100", "field_10100"],
    ["customfield_10090", "labels_10090"],
    ["customfield_10050", "team"],
    ["customfield_10060", "team_10060"],
  ]);
  // The same list in another order gives the same slugs.
  t.deepEqual(
    customFields([...list].reverse()).map((field) => [field.id, field.slug]),
    slugs,
  );
});

test("mappings: by the field's schema; sprint, cascading select, text area and unknown types are JSON or read-only", (t) => {
  t.is(mappingOf({ type: "number" }), "number");
  t.is(mappingOf({ type: "option" }), "option");
  t.is(mappingOf({ type: "array", items: "option" }), "options");
  t.is(mappingOf({ type: "array", items: "string" }), "strings");
  t.is(mappingOf({ type: "array", items: "user" }), "users");
  t.is(mappingOf({ type: "user" }), "user");
  t.is(mappingOf({ type: "date" }), "date");
  t.is(mappingOf({ type: "datetime" }), "datetime");
  t.is(mappingOf({ type: "array", items: "json", custom: "com.pyxis.greenhopper.jira:gh-sprint" }), "sprint");
  t.is(mappingOf({ type: "option-with-child" }), "json");
  t.is(
    mappingOf({ type: "string", custom: "com.atlassian.jira.plugin.system.customfieldtypes:textarea" }),
    "json",
  );
  t.is(mappingOf({ type: "sd-customerrequesttype" }), "json");
});

test("values: read as the file shows them, written in the tracker's shapes", (t) => {
  t.is(readCustomValue("number", 5), 5);
  t.is(readCustomValue("number", null), undefined);
  t.is(readCustomValue("option", { value: "Core", id: "1" }), "Core");
  t.deepEqual(readCustomValue("options", [{ value: "A" }, { value: "B" }]), ["A", "B"]);
  t.is(readCustomValue("options", []), undefined);
  t.is(readCustomValue("user", { accountId: "557058:a" }), "557058:a");
  t.deepEqual(readCustomValue("sprint", [{ id: 1, name: "Sprint 7" }]), ["Sprint 7"]);
  t.is(readCustomValue("date", "2026-12-24"), "2026-12-24");
  t.is(readCustomValue("json", { b: 1, a: { d: 2, c: 3 } }), '{"a":{"c":3,"d":2},"b":1}');
  t.deepEqual(readCustomValue("number", "five"), { problem: "is not the number its field's type says" });
  t.is(canonicalJson([{ b: 1, a: 2 }]), '[{"a":2,"b":1}]');

  t.is(writeCustomValue("number", 5), 5);
  t.deepEqual(writeCustomValue("option", "Core"), { value: "Core" });
  t.deepEqual(writeCustomValue("options", ["A", "B"]), [{ value: "A" }, { value: "B" }]);
  t.deepEqual(writeCustomValue("user", "557058:a"), { accountId: "557058:a" });
  t.deepEqual(writeCustomValue("users", ["x"]), [{ accountId: "x" }]);
  t.is(writeCustomValue("option", null), null);
});

test("an issue's fields of issue 35: components, versions, due, reporter, resolution and the custom fields", (t) => {
  const catalog = new FieldCatalog([custom("customfield_10016", "Story Points")]);
  t.deepEqual(
    readExtraFields(
      "TEST-1",
      {
        components: [{ name: "API" }],
        fixVersions: [],
        duedate: "2026-12-24",
        reporter: { accountId: "557058:a" },
        resolution: null,
        customfield_10016: 3,
        customfield_99999: "not in the list",
      },
      catalog,
    ),
    { components: ["API"], due: "2026-12-24", reporter: "557058:a", story_points: 3 },
  );
  t.regex(String(readExtraFields("TEST-1", { duedate: "tomorrow" }, catalog)), /duedate is not a date/);
  t.regex(String(readExtraFields("TEST-1", { customfield_10016: "x" }, catalog)), /story_points/);
  t.true(catalog.lacksAny({ customfield_99999: 1 }));
  t.false(catalog.lacksAny({ customfield_10016: 1, summary: "x" }));
  t.deepEqual(
    catalog.schema.fields.slice(-6).map((spec) => spec.name),
    ["components", "fix_versions", "due", "reporter", "resolution", "story_points"],
  );
});

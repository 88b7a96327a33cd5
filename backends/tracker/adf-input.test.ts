/**
 * The ADF converter (backends/tracker/adf.ts, adf-inline.ts) on input nobody shaped for it: any JSON the
 * server sends as an issue's description gives Markdown that reads back as that very JSON, or the issue
 * is refused with a reason (issue.ts), never a crash; any text a user writes as a description gives a
 * document or a `UserFacingError` naming the line, and the canonical form of a description (what the
 * schema compares, `adfToMarkdown(markdownToAdf(text))`) is a fixed point. The ADF-shaped properties of
 * adf.test.ts stay there; these add arbitrary JSON and arbitrary text. "Reads back as" is JSON equality
 * (core/checks.ts `jsonEqual`): member order aside, the same values.
 */
import test from "ava";
import fc from "fast-check";
import { jsonEqual } from "../../core/checks.js";
import { UserFacingError } from "../../core/errors.js";
import { holds } from "../../testing/fuzz.js";
import { type AdfDoc, adfToMarkdown, markdownToAdf } from "./adf.js";
import { FieldCatalog } from "./field-catalog.js";
import { toTrackerIssue } from "./issue.js";

const NO_FIELDS = new FieldCatalog([]);

const ISSUE = {
  id: "10042",
  key: "TEST-42",
  fields: {
    summary: "A title",
    status: { name: "In Progress" },
    priority: { name: "Medium" },
    issuetype: { name: "Task" },
    labels: [],
    created: "2026-11-20T09:00:00.000+0100",
    updated: "2026-11-23T10:30:00.123+0000",
  },
};

/** ADF-shaped JSON with anything in its slots: known and unknown types, wrong types, deep nesting. */
const adfShaped: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.record(
      {
        type: fc.oneof(
          fc.constantFrom(
            "paragraph",
            "text",
            "heading",
            "bulletList",
            "orderedList",
            "listItem",
            "codeBlock",
          ),
          fc.constantFrom("blockquote", "rule", "hardBreak", "table", "mention", "doc", "panel"),
          fc.string({ maxLength: 6 }),
        ),
        text: fc.oneof(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 1 })),
        content: fc.oneof(fc.array(tie("node"), { maxLength: 3 }), fc.jsonValue({ maxDepth: 1 })),
        attrs: fc.oneof(
          fc.record({ level: fc.integer({ min: -1, max: 7 }) }, { requiredKeys: [] }),
          fc.record(
            { order: fc.integer({ min: -2, max: 99 }), language: fc.string({ maxLength: 4 }) },
            { requiredKeys: [] },
          ),
          fc.jsonValue({ maxDepth: 1 }),
        ),
        marks: fc.oneof(
          fc.array(
            fc.record(
              {
                type: fc.constantFrom("strong", "em", "strike", "code", "link", "underline", "x"),
                attrs: fc.jsonValue({ maxDepth: 1 }),
              },
              { requiredKeys: ["type"] },
            ),
            { maxLength: 3 },
          ),
          fc.jsonValue({ maxDepth: 1 }),
        ),
      },
      { requiredKeys: ["type"] },
    ),
    fc.jsonValue({ maxDepth: 1 }),
  ),
  doc: fc.record(
    {
      type: fc.constant("doc"),
      version: fc.oneof(fc.constant(1), fc.jsonValue({ maxDepth: 0 })),
      content: fc.oneof(fc.array(tie("node"), { maxLength: 4 }), fc.jsonValue({ maxDepth: 1 })),
    },
    { requiredKeys: ["type"] },
  ),
})).doc;

const anyJson = fc.oneof(fc.jsonValue({ maxDepth: 4 }), adfShaped);

test("property: any JSON description gives an issue whose Markdown reads back as that JSON, or a reason", (t) => {
  holds(
    t,
    fc.property(anyJson, (description) => {
      const issue = toTrackerIssue({ ...ISSUE, fields: { ...ISSUE.fields, description } }, NO_FIELDS);
      const isDoc =
        description === null ||
        (typeof description === "object" &&
          !Array.isArray(description) &&
          (description as { type?: unknown }).type === "doc");
      if (typeof issue === "string") return !isDoc && issue === "TEST-42: description is not an ADF document";
      if (!isDoc) return false;
      const markdown = issue.record.content.body;
      // The same description gives the same bytes, and reads back as itself (nothing is lost or changed).
      return (
        markdown === adfToMarkdown(structuredClone(description)) &&
        jsonEqual(markdownToAdf(markdown), description)
      );
    }),
    300,
  );
});

test("property: adfToMarkdown refuses anything but a document with a TypeError naming it (a caller's bug)", (t) => {
  holds(
    t,
    fc.property(fc.jsonValue({ maxDepth: 3 }), (value) => {
      const isDoc =
        value === null ||
        (typeof value === "object" && !Array.isArray(value) && (value as { type?: unknown }).type === "doc");
      try {
        return typeof adfToMarkdown(value) === "string" && isDoc;
      } catch (error) {
        return (
          !isDoc &&
          error instanceof TypeError &&
          error.message.startsWith('expected an ADF document ({"type":"doc",…}), received ')
        );
      }
    }),
    300,
  );
});

/** Text a user may write: Markdown syntax, fences with good and broken JSON, and anything else. */
const description = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        "\n",
        "\n\n",
        "```adf\n",
        "```\n",
        "```js\n",
        '{"type":"rule"}\n',
        '{"type":"doc","version":1,"content":[]}\n',
        '{"type":',
        "[1]\n",
        "# ",
        "- ",
        "1. ",
        "1) ",
        "> ",
        "---\n",
        "**",
        "_",
        "`",
        "[a](http://x)",
        "<!-- -->\n",
        "  ",
        "\\",
        "\r\n",
      ),
      fc.string({ maxLength: 8 }),
    ),
    { maxLength: 14 },
  )
  .map((parts) => parts.join(""));

test("property: any description text is a document (or none) or a UserFacingError naming its line", (t) => {
  holds(
    t,
    fc.property(description, (text) => {
      let doc: AdfDoc | null;
      try {
        doc = markdownToAdf(text);
      } catch (error) {
        if (!(error instanceof UserFacingError)) throw error;
        // A broken fence, or what a Jira description cannot hold (raw HTML, an image, …): both name the line.
        return (
          (error.code === "SVC_RECORD_PARSE" &&
            /^the ```adf block at line \d+ of the description /.test(error.message)) ||
          (error.code === "SVC_RECORD_INVALID" &&
            /^line \d+ of the description has .+: ./.test(error.message))
        );
      }
      // A document without blocks comes only from an ```adf fence holding that whole document (adf.ts keeps
      // every document losslessly, `{"type":"doc","version":1,"content":[]}` too), and is written back as one.
      return (
        doc === null ||
        (doc.type === "doc" &&
          doc.version === 1 &&
          Array.isArray(doc.content) &&
          (doc.content.length > 0 || adfToMarkdown(doc) === `\`\`\`adf\n${JSON.stringify(doc)}\n\`\`\`\n`))
      );
    }),
    500,
  );
});

test("property: the canonical form of any description that parses is a fixed point", (t) => {
  holds(
    t,
    fc.property(description, (text) => {
      let canonical: string;
      try {
        canonical = adfToMarkdown(markdownToAdf(text));
      } catch (error) {
        if (error instanceof UserFacingError) return true;
        throw error;
      }
      return adfToMarkdown(markdownToAdf(canonical)) === canonical;
    }),
    500,
  );
});

test("a fence holding a whole document is that document, even without blocks; beside other blocks it is refused at its line", (t) => {
  const empty = '```adf\n{"type":"doc","version":1,"content":[]}\n```\n';
  t.deepEqual(markdownToAdf(empty), { type: "doc", version: 1, content: [] });
  t.is(adfToMarkdown({ type: "doc", version: 1, content: [] }), empty);
  const error = t.throws(() => markdownToAdf(`Intro\n\n${empty}`), { instanceOf: UserFacingError });
  t.regex(
    error?.message ?? "",
    /^the ```adf block at line 3 of the description holds a whole document beside other blocks/,
  );
});

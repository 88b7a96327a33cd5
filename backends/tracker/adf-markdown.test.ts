/**
 * Markdown as users write it (CommonMark + GFM) → ADF, judged by Atlassian's own schema (testing/adf-schema.ts):
 * a corpus of every construct the converter maps, with the ADF it gives and the Markdown it reads back as;
 * every construct it refuses, with the line and the construct the refusal names; and a property over
 * generated Markdown: whatever is not refused is a valid ADF document that reads back as itself.
 */
import assert from "node:assert/strict";
import test from "ava";
import fc from "fast-check";
import { UserFacingError } from "../../core/errors.js";
import { adfSchemaProblem } from "../../testing/adf-schema.js";
import { holds } from "../../testing/fuzz.js";
import { type AdfMark, type AdfNode, adfToMarkdown, canonicalMarkdown, markdownToAdf } from "./adf.js";

const text = (value: string, ...marks: AdfMark[]): AdfNode =>
  marks.length === 0 ? { type: "text", text: value } : { type: "text", text: value, marks };
const para = (...content: AdfNode[]): AdfNode => ({ type: "paragraph", content });
const item = (...content: AdfNode[]): AdfNode => ({ type: "listItem", content });
const link = (href: string, title?: string): AdfMark => ({
  type: "link",
  attrs: title === undefined ? { href } : { href, title },
});
const cell = (type: string, align: string | undefined, ...content: AdfNode[]): AdfNode => ({
  type,
  content: [
    align === undefined
      ? { type: "paragraph", content }
      : { type: "paragraph", marks: [{ type: "alignment", attrs: { align } }], content },
  ],
});
const task = (n: number, state: "TODO" | "DONE", ...content: AdfNode[]): AdfNode => ({
  type: "taskItem",
  attrs: { localId: `task-${n}`, state },
  content,
});

test("the validator rejects what the ADF schema forbids, and takes what it allows", (t) => {
  const doc = (...content: unknown[]) => ({ type: "doc", version: 1, content });
  t.is(adfSchemaProblem(doc(para(text("fine")))), undefined);
  t.regex(adfSchemaProblem(doc(para(text("")))) ?? "", /fewer than 1 characters/);
  t.truthy(adfSchemaProblem(doc({ type: "taskList", content: [task(1, "TODO", text("x"))] })));
  t.truthy(adfSchemaProblem(doc(para(text("x", { type: "strong" }, { type: "code" })))));
  t.truthy(adfSchemaProblem(doc({ type: "blockquote", content: [{ type: "rule" }] })));
  t.truthy(adfSchemaProblem(doc({ type: "madeUp" })));
  t.truthy(adfSchemaProblem({ type: "doc", content: [] }));
});

/** Markdown, the ADF it gives, and the Markdown that ADF reads back as (`same`: as written). */
const CORPUS: readonly { name: string; markdown: string; adf: AdfNode[]; back: string | "same" }[] = [
  {
    name: "emphasis, strong, strike, code, a soft line break",
    markdown: "Plain *em*, __strong__, ~~gone~~ and `code`\nwrapped.",
    adf: [
      para(
        text("Plain "),
        text("em", { type: "em" }),
        text(", "),
        text("strong", { type: "strong" }),
        text(", "),
        text("gone", { type: "strike" }),
        text(" and "),
        text("code", { type: "code" }),
        text(" wrapped."),
      ),
    ],
    back: "Plain _em_, **strong**, ~~gone~~ and `code` wrapped.\n",
  },
  {
    name: "nested marks, a code span in a link",
    markdown: "***both*** [`x`](https://c.example)",
    adf: [
      para(
        text("both", { type: "strong" }, { type: "em" }),
        text(" "),
        text("x", link("https://c.example"), { type: "code" }),
      ),
    ],
    back: "**_both_** [`x`](https://c.example)\n",
  },
  {
    name: "headings, ATX and setext",
    markdown: "## Two\n\nOne\n===",
    adf: [
      { type: "heading", attrs: { level: 2 }, content: [text("Two")] },
      { type: "heading", attrs: { level: 1 }, content: [text("One")] },
    ],
    back: "## Two\n\n# One\n",
  },
  {
    name: "a hard break as two trailing spaces",
    markdown: "two spaces  \nthen a break",
    adf: [para(text("two spaces"), { type: "hardBreak" }, text("then a break"))],
    back: "two spaces\\\nthen a break\n",
  },
  {
    name: "a hard break as a backslash",
    markdown: "a backslash\\\nthen a break\n",
    adf: [para(text("a backslash"), { type: "hardBreak" }, text("then a break"))],
    back: "same",
  },
  {
    name: "links: inline with a title, a reference, an autolink, GFM's literals",
    markdown:
      '[text](https://x.y "Title"), [ref][r], <https://example.com/a>, https://example.org, www.example.net, ann@example.com\n\n[r]: https://r.example',
    adf: [
      para(
        text("text", link("https://x.y", "Title")),
        text(", "),
        text("ref", link("https://r.example")),
        text(", "),
        text("https://example.com/a", link("https://example.com/a")),
        text(", "),
        text("https://example.org", link("https://example.org")),
        text(", "),
        text("www.example.net", link("http://www.example.net")),
        text(", "),
        text("ann@example.com", link("mailto:ann@example.com")),
      ),
    ],
    back: '[text](https://x.y "Title"), [ref](https://r.example), <https://example.com/a>, <https://example.org>, [www.example.net](http://www.example.net), <ann@example.com>\n',
  },
  {
    name: "nested lists; a new bullet character starts a new list",
    markdown: "* a\n  1. b\n  2. c\n+ other",
    adf: [
      {
        type: "bulletList",
        content: [
          item(para(text("a")), {
            type: "orderedList",
            attrs: { order: 1 },
            content: [item(para(text("b"))), item(para(text("c")))],
          }),
        ],
      },
      { type: "bulletList", content: [item(para(text("other")))] },
    ],
    back: "- a\n  1. b\n  2. c\n\n<!-- -->\n\n- other\n",
  },
  {
    name: "an ordered list's start; `1)` is an ordered list without attrs",
    markdown: "3. three\n4. four\n\n1) plain\n",
    adf: [
      {
        type: "orderedList",
        attrs: { order: 3 },
        content: [item(para(text("three"))), item(para(text("four")))],
      },
      { type: "orderedList", content: [item(para(text("plain")))] },
    ],
    back: "same",
  },
  {
    name: "a list item of two paragraphs; an empty item",
    markdown: "- a\n\n  more\n-\n",
    adf: [{ type: "bulletList", content: [item(para(text("a")), para(text("more"))), item(para())] }],
    back: "same",
  },
  {
    name: "code blocks: fenced with a language, indented",
    markdown: "```ts\nconst a = 1;\n```\n\n    indented = 1",
    adf: [
      { type: "codeBlock", attrs: { language: "ts" }, content: [text("const a = 1;")] },
      { type: "codeBlock", content: [text("indented = 1")] },
    ],
    back: "```ts\nconst a = 1;\n```\n\n```\nindented = 1\n```\n",
  },
  {
    name: "a block quote of several paragraphs and a list; a rule",
    markdown: "> one\n>\n> two\n>\n> - three\n\n***",
    adf: [
      {
        type: "blockquote",
        content: [
          para(text("one")),
          para(text("two")),
          { type: "bulletList", content: [item(para(text("three")))] },
        ],
      },
      { type: "rule" },
    ],
    back: "> one\n>\n> two\n>\n> - three\n\n---\n",
  },
  {
    name: "a table: header row, alignment, a short row filled in",
    markdown: "| A | B | C |\n|:-:|--:|:--|\n| 1 | **2** | 3 |\n| 4 |",
    adf: [
      {
        type: "table",
        content: [
          {
            type: "tableRow",
            content: [
              cell("tableHeader", "center", text("A")),
              cell("tableHeader", "end", text("B")),
              cell("tableHeader", undefined, text("C")),
            ],
          },
          {
            type: "tableRow",
            content: [
              cell("tableCell", "center", text("1")),
              cell("tableCell", "end", text("2", { type: "strong" })),
              cell("tableCell", undefined, text("3")),
            ],
          },
          {
            type: "tableRow",
            content: [
              cell("tableCell", "center", text("4")),
              cell("tableCell", "end"),
              cell("tableCell", undefined),
            ],
          },
        ],
      },
    ],
    back: "|  A  |     B | C |\n| :-: | ----: | - |\n|  1  | **2** | 3 |\n|  4  |       |   |\n",
  },
  {
    name: "a task list with a nested one",
    markdown: "- [ ] todo\n- [x] done\n  - [ ] sub\n",
    adf: [
      {
        type: "taskList",
        attrs: { localId: "task-list-1" },
        content: [
          task(1, "TODO", text("todo")),
          task(2, "DONE", text("done")),
          { type: "taskList", attrs: { localId: "task-list-2" }, content: [task(3, "TODO", text("sub"))] },
        ],
      },
    ],
    back: "same",
  },
  {
    name: "a task list in a list item",
    markdown: "- plan\n  - [ ] step\n",
    adf: [
      {
        type: "bulletList",
        content: [
          item(para(text("plan")), {
            type: "taskList",
            attrs: { localId: "task-list-1" },
            content: [task(1, "TODO", text("step"))],
          }),
        ],
      },
    ],
    back: "same",
  },
];

for (const { name, markdown, adf, back } of CORPUS) {
  test(`corpus: ${name}`, (t) => {
    const doc = markdownToAdf(markdown);
    t.deepEqual(doc, { type: "doc", version: 1, content: adf });
    t.is(adfSchemaProblem(doc), undefined);
    const written = adfToMarkdown(doc);
    t.is(written, back === "same" ? markdown : back);
    t.deepEqual(markdownToAdf(written), doc);
    t.is(canonicalMarkdown(markdown), written);
  });
}

/** Markdown ADF cannot hold, the lines the refusal names and what it says the construct is. */
const REFUSED: readonly { markdown: string; lines: number[]; says: RegExp }[] = [
  {
    markdown: "Say <b>bold</b> here",
    lines: [1],
    says: /raw HTML "<b>": a Jira description cannot hold HTML/,
  },
  { markdown: "Intro\n\n<div>\nx\n</div>", lines: [3], says: /raw HTML "<div>"/ },
  { markdown: "<!-- note -->", lines: [1], says: /an HTML comment/ },
  { markdown: "![alt](https://x/y.png)", lines: [1], says: /an image "!\[alt\]\(https:\/\/x\/y\.png\)"/ },
  {
    markdown: "Text[^1]\n\n[^1]: note",
    lines: [1, 3],
    says: /a footnote reference[\s\S]*line 3 of the description has a footnote/,
  },
  { markdown: "> # Title", lines: [1], says: /a heading inside a block quote/ },
  { markdown: "> > nested", lines: [1], says: /a block quote inside a block quote/ },
  { markdown: "> ---\n> x", lines: [1], says: /a rule inside a block quote/ },
  { markdown: "- # h", lines: [1], says: /a heading inside a list item/ },
  { markdown: "- a\n\n  | x |\n  |---|", lines: [3], says: /a table inside a list item/ },
  { markdown: "> - [ ] a", lines: [1], says: /a task list inside a block quote/ },
  { markdown: "**`code`**", lines: [1], says: /a code span inside bold/ },
  { markdown: "- [ ] a\n- b", lines: [1], says: /a list mixing task items/ },
  { markdown: "1. [ ] a", lines: [1], says: /a numbered task list/ },
  { markdown: "- [ ] a\n\n  more", lines: [3], says: /more than one paragraph inside a task item/ },
  { markdown: "[](https://x)", lines: [1], says: /a link without text/ },
  { markdown: "```js title=x\ny\n```", lines: [1], says: /info string says more than its language/ },
  { markdown: "| a |\n|---|\n| 1 | 2 |", lines: [3], says: /a table row of 2 cells under a header of 1/ },
];

for (const { markdown, lines, says } of REFUSED) {
  test(`refused, naming the line: ${JSON.stringify(markdown)}`, (t) => {
    const error = t.throws(() => markdownToAdf(markdown), { instanceOf: UserFacingError });
    t.is(error.code, "SVC_RECORD_INVALID");
    t.deepEqual(error.data.lines, lines);
    t.regex(error.message, new RegExp(`^line ${lines[0]} of the description has `));
    t.regex(error.message, says);
  });
}

// ---------------------------------------------------------------------------------------------------------
// Generated Markdown.

const word = fc.oneof(
  fc.constantFrom(
    "word",
    "two words",
    "snake_case",
    "x*y",
    "a_b_",
    "1.",
    "#",
    "|",
    "\\",
    "&amp;",
    "é",
    "😀",
    "~",
  ),
  fc
    .string({ unit: "grapheme-ascii", minLength: 1, maxLength: 5 })
    .map((value) => value.replace(/[<\n\r]/g, "")),
);
const inlinePiece = fc.oneof(
  word,
  word.map((value) => `*${value}*`),
  word.map((value) => `_${value}_`),
  word.map((value) => `**${value}**`),
  word.map((value) => `~~${value}~~`),
  word.map((value) => `\`${value.replace(/`/g, "")}\``),
  word.map((value) => `[${value}](https://example.com/${encodeURIComponent(value)})`),
  fc.constantFrom("<https://example.com/x>", "https://example.org/y", "www.example.net", "ann@example.com"),
);
const line = fc.array(inlinePiece, { minLength: 1, maxLength: 5 }).map((pieces) => pieces.join(" "));
const lines = fc
  .array(fc.tuple(line, fc.constantFrom("\n", "  \n", "\\\n")), { minLength: 1, maxLength: 3 })
  .map((parts) =>
    parts.map(([text, end], index) => (index === parts.length - 1 ? text : text + end)).join(""),
  );

const block = fc.oneof(
  lines,
  fc.tuple(fc.integer({ min: 1, max: 6 }), line).map(([level, text]) => `${"#".repeat(level)} ${text}`),
  fc
    .tuple(fc.constantFrom("-", "*", "+", "1.", "1)", "7."), fc.array(line, { minLength: 1, maxLength: 3 }))
    .map(([marker, items]) => items.map((text) => `${marker} ${text}`).join("\n")),
  fc
    .array(fc.tuple(fc.boolean(), line), { minLength: 1, maxLength: 3 })
    .map((items) => items.map(([done, text]) => `- [${done ? "x" : " "}] ${text}`).join("\n")),
  fc.tuple(line, line).map(([outer, inner]) => `- ${outer}\n  - ${inner}`),
  fc
    .array(lines, { minLength: 1, maxLength: 2 })
    .map((paragraphs) => paragraphs.map((p) => `> ${p.replace(/\n/g, "\n> ")}`).join("\n>\n")),
  fc
    .tuple(fc.constantFrom("", "js", "python"), fc.array(word, { maxLength: 3 }))
    .map(([language, body]) => `\`\`\`${language}\n${body.join("\n").replace(/`/g, "")}\n\`\`\``),
  fc.constantFrom("---", "***", "___"),
  fc
    .tuple(
      fc.integer({ min: 1, max: 3 }),
      fc.array(fc.array(word, { minLength: 1, maxLength: 3 }), { maxLength: 2 }),
    )
    .map(([width, rows]) => {
      const row = (cells: readonly string[]) =>
        `| ${cells.map((cell) => cell.replace(/[|\\]/g, "")).join(" | ")} |`;
      const header = Array.from({ length: width }, (_, index) => `H${index}`);
      return [
        row(header),
        row(header.map(() => "---")),
        ...rows.map((cells) => row(cells.slice(0, width))),
      ].join("\n");
    }),
);
const markdown = fc.array(block, { minLength: 1, maxLength: 5 }).map((blocks) => blocks.join("\n\n"));

test("property: generated Markdown gives valid ADF that reads back as itself, or is refused naming a line", (t) => {
  holds(
    t,
    fc.property(markdown, (source) => {
      let doc: ReturnType<typeof markdownToAdf>;
      try {
        doc = markdownToAdf(source);
      } catch (error) {
        if (!(error instanceof UserFacingError) || error.code !== "SVC_RECORD_INVALID") throw error;
        assert.match(error.message, /^line \d+ of the description has /);
        return;
      }
      if (doc === null) return;
      assert.equal(adfSchemaProblem(doc), undefined, JSON.stringify(doc));
      const written = adfToMarkdown(doc);
      assert.deepStrictEqual(markdownToAdf(written), doc);
      assert.equal(canonicalMarkdown(written), written);
    }),
    200,
  );
});

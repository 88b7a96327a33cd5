/**
 * The ADF ⇄ Markdown converter's contract: golden Markdown for each supported node and mark and for the
 * nodes kept as ```adf fences, then properties: ADF → Markdown → ADF is the identity for random documents
 * of supported and unsupported nodes; documents of supported nodes in canonical form need no fence at all;
 * editing one paragraph leaves every fenced node byte-identical; Markdown → ADF → Markdown is the identity
 * on the renderer's output; and the errors a broken fence gives.
 */
import assert from "node:assert/strict";
import test from "ava";
import fc from "fast-check";
import { UserFacingError } from "../../core/errors.js";
import {
  anyDoc,
  canonicalDoc,
  canonicalInline,
  doc,
  EM,
  EMOJI,
  item,
  link,
  MEDIA,
  MENTION,
  PANEL,
  para,
  STATUS,
  STRONG,
  TABLE,
  text,
} from "../../testing/adf-arbitraries.js";
import { holds } from "../../testing/fuzz.js";
import { type AdfDoc, type AdfNode, adfToMarkdown, markdownToAdf } from "./adf.js";

// ---------------------------------------------------------------------------------------------------------
// Golden Markdown. A changed byte here changes every synced description: never edit one to make a test pass.

const fenced = (node: AdfNode) => `\`\`\`adf\n${JSON.stringify(node)}\n\`\`\``;

const GOLDEN: readonly { name: string; doc: AdfDoc; markdown: string }[] = [
  { name: "paragraph", doc: doc(para(text("Plain text."))), markdown: "Plain text.\n" },
  {
    name: "headings 1 and 6",
    doc: doc(
      { type: "heading", attrs: { level: 1 }, content: [text("Top")] },
      { type: "heading", attrs: { level: 6 }, content: [text("Deep")] },
    ),
    markdown: "# Top\n\n###### Deep\n",
  },
  {
    name: "the five marks",
    doc: doc(
      para(
        text("bold", STRONG),
        text(" "),
        text("it", EM),
        text(" "),
        text("code", { type: "code" }),
        text(" "),
        text("gone", { type: "strike" }),
        text(" "),
        text("site", link("https://example.com/a_b")),
        text(" "),
        text("titled", link("https://example.com", 'say "hi"')),
      ),
    ),
    markdown:
      '**bold** _it_ `code` ~~gone~~ [site](https://example.com/a_b) [titled](https://example.com "say \\"hi\\"")\n',
  },
  {
    name: "nested marks in canonical order, a link over two nodes",
    doc: doc(para(text("a:", link("u"), STRONG), text("b", link("u"), STRONG, EM), text(" c", link("u")))),
    markdown: "[**a:_b_** c](u)\n",
  },
  {
    name: "hard break",
    doc: doc(para(text("line one"), { type: "hardBreak" }, text("line two"))),
    markdown: "line one\\\nline two\n",
  },
  {
    name: "escaping",
    doc: doc(para(text("# 1. *a* _b_ `c` [d] ~~e~~ \\ <f> &amp;"), { type: "hardBreak" }, text("- > 2) x"))),
    markdown: "\\# 1. \\*a\\* \\_b\\_ \\`c\\` \\[d] \\~\\~e\\~\\~ \\ \\<f> \\&amp;\\\n\\- > 2) x\n",
  },
  {
    name: "nested lists, an ordered list's start, a list without attrs",
    doc: doc(
      {
        type: "bulletList",
        content: [
          item(para(text("one")), {
            type: "bulletList",
            content: [item(para(text("one.a"))), item(para(text("one.b")))],
          }),
          item(para(text("two")), {
            type: "orderedList",
            attrs: { order: 1 },
            content: [item(para(text("first")))],
          }),
        ],
      },
      {
        type: "orderedList",
        attrs: { order: 9 },
        content: [item(para(text("nine"))), item(para(text("ten")))],
      },
      { type: "orderedList", content: [item(para(text("plain")))] },
    ),
    markdown: "- one\n  - one.a\n  - one.b\n- two\n  1. first\n\n9. nine\n10. ten\n\n1) plain\n",
  },
  {
    name: "two bullet lists in a row",
    doc: doc(
      { type: "bulletList", content: [item(para(text("a")))] },
      { type: "bulletList", content: [item(para(text("b")))] },
    ),
    markdown: "- a\n\n<!-- -->\n\n- b\n",
  },
  {
    name: "code block with language, blockquote, rule",
    doc: doc(
      { type: "codeBlock", attrs: { language: "ts" }, content: [text("const a = `x`;\n\nreturn a;")] },
      { type: "blockquote", content: [para(text("quoted")), para(text("twice"))] },
      { type: "rule" },
    ),
    markdown: "```ts\nconst a = `x`;\n\nreturn a;\n```\n\n> quoted\n>\n> twice\n\n---\n",
  },
  {
    name: "U+2028 in a heading and a code span (a regular expression's `.` stops there)",
    doc: doc(
      { type: "heading", attrs: { level: 2 }, content: [text("a\u2028b")] },
      para(text(" \u2028 ", { type: "code" })),
    ),
    markdown: "## a\u2028b\n\n`  \u2028  `\n",
  },
  {
    name: "a code block holding a fence gets a longer one",
    doc: doc({ type: "codeBlock", content: [text("```\nx\n```")] }),
    markdown: "````\n```\nx\n```\n````\n",
  },
  { name: "a table", doc: doc(para(text("Before")), TABLE), markdown: `Before\n\n${fenced(TABLE)}\n` },
  { name: "a panel", doc: doc(PANEL), markdown: `${fenced(PANEL)}\n` },
  {
    name: "a mention: its whole paragraph is a fence",
    doc: doc(para(text("cc "), MENTION)),
    markdown: `${fenced(para(text("cc "), MENTION))}\n`,
  },
  { name: "an emoji", doc: doc(para(EMOJI)), markdown: `${fenced(para(EMOJI))}\n` },
  { name: "a status lozenge", doc: doc(para(STATUS)), markdown: `${fenced(para(STATUS))}\n` },
  { name: "media", doc: doc(MEDIA), markdown: `${fenced(MEDIA)}\n` },
  {
    name: "a list item with a fenced child",
    doc: doc({ type: "bulletList", content: [item(para(text("see")), PANEL)] }),
    markdown: `- see\n  ${fenced(PANEL).replace(/\n/g, "\n  ")}\n`,
  },
  {
    name: "an underlined word keeps its paragraph as a fence",
    doc: doc(para(text("under", { type: "underline" }))),
    markdown: `${fenced(para(text("under", { type: "underline" })))}\n`,
  },
  {
    name: "marks out of the canonical order",
    doc: doc(para(text("x", EM, STRONG))),
    markdown: `${fenced(para(text("x", EM, STRONG)))}\n`,
  },
  {
    // CommonMark's delimiters must touch their text: the printer writes the spaces, and the letters beside
    // the delimiters, as character references.
    name: "white space inside a mark",
    doc: doc(para(text("a"), text(" b ", STRONG), text("c"))),
    markdown: "&#x61;**&#x20;b&#x20;**&#x63;\n",
  },
  {
    name: "an empty paragraph, a paragraph with attrs",
    doc: doc(para(), { type: "paragraph", attrs: { localId: "p1" }, content: [text("x")] }),
    markdown: `${fenced(para())}\n\n${fenced({ type: "paragraph", attrs: { localId: "p1" }, content: [text("x")] })}\n`,
  },
  {
    name: "an empty document is one fence",
    doc: doc(),
    markdown: '```adf\n{"type":"doc","version":1,"content":[]}\n```\n',
  },
];

for (const { name, doc: input, markdown } of GOLDEN) {
  test(`golden: ${name}`, (t) => {
    t.is(adfToMarkdown(input), markdown);
    t.deepEqual(markdownToAdf(markdown), input);
  });
}

test("no description is the empty string, both ways", (t) => {
  t.is(adfToMarkdown(null), "");
  t.is(markdownToAdf(""), null);
  t.is(markdownToAdf("\n\n  \n"), null);
});

test("hand edits: CRLF, a soft line break, `*em*`, `+` items, snake_case, a stray bracket", (t) => {
  t.deepEqual(
    markdownToAdf("Some *em* and\r\nmore [text\r\n\r\n+ a\r\n+ b\r\n"),
    doc(para(text("Some "), text("em", EM), text(" and more [text")), {
      type: "bulletList",
      content: [item(para(text("a"))), item(para(text("b")))],
    }),
  );
  t.deepEqual(markdownToAdf("call snake_case_name **now"), doc(para(text("call snake_case_name **now"))));
  t.deepEqual(
    markdownToAdf("__strong__ and *em*"),
    doc(para(text("strong", STRONG), text(" and "), text("em", EM))),
  );
});

test("hand edits: a paragraph, a list item and a heading added beside fenced nodes", (t) => {
  const original = doc(
    para(text("Intro")),
    { type: "bulletList", content: [item(para(text("one")))] },
    TABLE,
  );
  const markdown = adfToMarkdown(original);
  const edited = markdown
    .replace("Intro\n", "Intro, **edited**\n\nA new paragraph.\n")
    .replace("- one\n", "- one\n- two\n\n## New heading\n");
  const result = markdownToAdf(edited) as AdfDoc;
  t.deepEqual(
    result,
    doc(
      para(text("Intro, "), text("edited", STRONG)),
      para(text("A new paragraph.")),
      { type: "bulletList", content: [item(para(text("one"))), item(para(text("two")))] },
      { type: "heading", attrs: { level: 2 }, content: [text("New heading")] },
      TABLE,
    ),
  );
  t.is(JSON.stringify(result.content[4]), JSON.stringify(TABLE));
});

test("a fence with invalid JSON is refused, naming the line", (t) => {
  const error = t.throws(() => markdownToAdf('Intro\n\n```adf\n{"type": "panel",\n```\n'), {
    instanceOf: UserFacingError,
  });
  t.regex(error.message, /^the ```adf block at line 3 of the description does not hold valid JSON \(/);
  t.regex(error.message, /e\.g\. \{"type":"rule"\}; received "\{\\"type\\": \\"panel\\","/);
  t.is(error.code, "SVC_RECORD_PARSE");
  t.deepEqual(error.data, { line: 3 });
});

test("a fence that is not a node, or never closed, is refused", (t) => {
  t.throws(() => markdownToAdf("```adf\n[1, 2]\n```\n"), {
    instanceOf: UserFacingError,
    message: /at line 1 of the description holds JSON that is not an ADF node/,
  });
  t.throws(() => markdownToAdf('text\n```adf\n{"type":"rule"}\n'), {
    instanceOf: UserFacingError,
    message: /at line 2 of the description is never closed/,
  });
});

test("anything but a document is a bug in the caller", (t) => {
  t.throws(() => adfToMarkdown({ type: "paragraph" }), { instanceOf: TypeError });
  t.throws(() => adfToMarkdown("wiki *markup*"), { instanceOf: TypeError });
});

// ---------------------------------------------------------------------------------------------------------
// Properties.

test("property: ADF → Markdown → ADF is the identity", (t) => {
  holds(
    t,
    fc.property(anyDoc, (input) => {
      assert.deepStrictEqual(markdownToAdf(adfToMarkdown(input)), input);
    }),
    300,
  );
});

test("property: supported nodes in canonical form are Markdown, never a fence", (t) => {
  holds(
    t,
    fc.property(canonicalDoc, (input) => {
      const markdown = adfToMarkdown(input);
      assert.doesNotMatch(markdown, /```adf$/m);
      assert.deepStrictEqual(markdownToAdf(markdown), input);
    }),
    300,
  );
});

test("property: the same document gives the same bytes; Markdown → ADF → Markdown is the identity", (t) => {
  holds(
    t,
    fc.property(anyDoc, (input) => {
      const markdown = adfToMarkdown(input);
      assert.equal(adfToMarkdown(structuredClone(input)), markdown);
      assert.equal(adfToMarkdown(markdownToAdf(markdown)), markdown);
    }),
    300,
  );
});

const PLACEHOLDER = "PLACEHOLDER-PARAGRAPH-7f3a";

test("property: editing one paragraph leaves every fenced node byte-identical", (t) => {
  holds(
    t,
    fc.property(anyDoc, fc.nat(), canonicalInline(true), (input, at, edited) => {
      // A document holding a block of type `doc` is one fence as a whole: it has no paragraph to edit.
      fc.pre(input.content.every((block) => block.type !== "doc"));
      const index = at % (input.content.length + 1);
      const content = [...input.content];
      content.splice(index, 0, para(text(PLACEHOLDER)));
      const markdown = adfToMarkdown(doc(...content));
      const parts = markdown.split(`${PLACEHOLDER}\n`);
      assert.equal(parts.length, 2, "the placeholder paragraph is one line of Markdown");
      const replacement = adfToMarkdown(doc(para(...edited)));
      const result = markdownToAdf(parts.join(replacement)) as AdfDoc;
      content[index] = para(...edited);
      assert.deepStrictEqual(result, doc(...content));
      for (const [i, node] of content.entries()) {
        if (markdown.includes(JSON.stringify(node)))
          assert.equal(JSON.stringify(result.content[i]), JSON.stringify(node));
      }
    }),
    300,
  );
});

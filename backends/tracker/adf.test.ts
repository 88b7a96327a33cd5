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
import { holds } from "../../testing/fuzz.js";
import { type AdfDoc, type AdfMark, type AdfNode, adfToMarkdown, markdownToAdf } from "./adf.js";

const text = (value: string, ...marks: AdfMark[]): AdfNode =>
  marks.length === 0 ? { type: "text", text: value } : { type: "text", text: value, marks };
const para = (...content: AdfNode[]): AdfNode => ({ type: "paragraph", content });
const item = (...content: AdfNode[]): AdfNode => ({ type: "listItem", content });
const doc = (...content: AdfNode[]): AdfDoc => ({ type: "doc", version: 1, content });
const STRONG = { type: "strong" };
const EM = { type: "em" };
const link = (href: string, title?: string): AdfMark => ({
  type: "link",
  attrs: title === undefined ? { href } : { href, title },
});

// ---------------------------------------------------------------------------------------------------------
// Golden Markdown. A changed byte here changes every synced description: never edit one to make a test pass.

const TABLE: AdfNode = {
  type: "table",
  attrs: { isNumberColumnEnabled: false, layout: "default", localId: "t1" },
  content: [
    {
      type: "tableRow",
      content: [
        { type: "tableHeader", attrs: {}, content: [para(text("Key", STRONG))] },
        { type: "tableCell", attrs: {}, content: [para(text("TEST-1"))] },
      ],
    },
  ],
};
const PANEL: AdfNode = { type: "panel", attrs: { panelType: "info" }, content: [para(text("Heads up"))] };
const MENTION: AdfNode = {
  type: "mention",
  attrs: { id: "5b10a2844c20165700ede21g", text: "@Ann", accessLevel: "" },
};
const EMOJI: AdfNode = { type: "emoji", attrs: { shortName: ":grinning:", id: "1f600", text: "😀" } };
const STATUS: AdfNode = { type: "status", attrs: { text: "IN PROGRESS", color: "blue", localId: "s1" } };
const MEDIA: AdfNode = {
  type: "mediaSingle",
  attrs: { layout: "center" },
  content: [
    { type: "media", attrs: { id: "6e7c7f2c", type: "file", collection: "", width: 640, height: 480 } },
  ],
};

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
// Generators.

/** Pieces of text chosen to break a careless escaper, plus any Unicode. */
const TRICKY = [
  "*",
  "**",
  "_",
  "__",
  "`",
  "```",
  "[",
  "]",
  "](x)",
  "#",
  "# ",
  ">",
  "> ",
  "-",
  "- ",
  "+ ",
  "1.",
  "2)",
  "\\",
  "~",
  "~~",
  "~~~",
  "<",
  "<a>",
  "<!-- -->",
  "&",
  "&amp;",
  "!",
  "(",
  ")",
  '"',
  "|",
  "=",
  "---",
  "\t",
  "é",
  "日本",
  "😀",
  "👍🏽",
  "\u00a0",
  "snake_case",
];
const piece = fc.oneof(
  fc.constantFrom(...TRICKY),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 4 }),
  fc.constantFrom("word", "two words", " "),
);
/** Text of a text node: anything but a newline (ADF's newline is hardBreak), possibly with edge spaces. */
const anyText = fc
  .array(piece, { minLength: 1, maxLength: 6 })
  .map((pieces) => pieces.join("").replace(/[\n\r]/g, " "));
/** Text that Markdown keeps exactly: no white space at its edges. */
const trimmedText = anyText.map((value) => value.replace(/^\s+|\s+$/gu, "")).filter((value) => value !== "");

/** Link targets the printer writes (one holding `<` or `>` it cannot: such a link is a fence, see oddBlock). */
const href = fc.oneof(
  fc.constantFrom("https://example.com/a?b=1&c=2", "https://x.y/(paren)", "rel/path", "", "a b", "a\\b"),
  fc.string({ unit: "grapheme", maxLength: 12 }).map((value) => value.replace(/[\n<>]/g, "")),
);
/** True one time in four: most text carries no mark or one. */
const sometimes = fc.nat(3).map((n) => n === 0);
const canonicalMarks: fc.Arbitrary<AdfMark[]> = fc
  .record({
    link: fc.oneof(
      { weight: 3, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.tuple(href, fc.option(anyText, { nil: undefined })) },
    ),
    strong: sometimes,
    em: sometimes,
    strike: sometimes,
    code: sometimes,
  })
  // ADF's code mark goes with a link only (the schema's code_inline_node).
  .map(({ link: linkAttrs, ...flags }) => [
    ...(linkAttrs === undefined ? [] : [link(...linkAttrs)]),
    ...(flags.code
      ? [{ type: "code" }]
      : (["strong", "em", "strike"] as const).filter((type) => flags[type]).map((type) => ({ type }))),
  ]);

/**
 * Inline content Markdown writes exactly: marked runs of trimmed text with a plain space or a hard break
 * between them (a delimiter always touches its text, never a letter outside it).
 */
const canonicalInline = (breaks: boolean): fc.Arbitrary<AdfNode[]> =>
  fc
    .array(fc.tuple(trimmedText, canonicalMarks, breaks ? fc.boolean() : fc.constant(false)), {
      minLength: 1,
      maxLength: 5,
    })
    .map((runs) =>
      normalize(
        runs.flatMap(([value, marks, hardBreak], index) => [
          ...(index === 0 ? [] : [hardBreak ? { type: "hardBreak" } : text(" ")]),
          text(value, ...marks),
        ]),
      ),
    );

/** Merges neighbouring text nodes with equal marks, as ADF requires. */
function normalize(nodes: readonly AdfNode[]): AdfNode[] {
  const merged: AdfNode[] = [];
  for (const node of nodes) {
    const previous = merged.at(-1);
    if (
      previous?.type === "text" &&
      node.type === "text" &&
      JSON.stringify(previous.marks) === JSON.stringify(node.marks)
    ) {
      merged[merged.length - 1] = text(`${previous.text}${node.text}`, ...(node.marks ?? []));
    } else merged.push(node);
  }
  return merged;
}

const codeText = fc
  .array(fc.oneof(piece, fc.constantFrom("\n", "\n\n", "```", "  indented", "````")), { maxLength: 6 })
  .map((pieces) => pieces.join("").replace(/\r/g, ""));
const codeBlock = fc
  .tuple(fc.option(fc.constantFrom("js", "c++", "python3", "shell-session"), { nil: undefined }), codeText)
  .map(
    ([language, body]): AdfNode => ({
      type: "codeBlock",
      ...(language === undefined ? {} : { attrs: { language } }),
      content: body === "" ? [] : [text(body)],
    }),
  );

/**
 * A table cell's text. Not `\|` in a code span: GFM takes the backslash of `\|` off even there, and the
 * printer does not double it (such a table is a fence, which the identity property covers).
 */
const cellInline = canonicalInline(false).filter((inline) =>
  inline.every((node) => !node.text?.includes("\\|")),
);

/** A GFM table: a header row over plain rows of one width, one paragraph per cell, one alignment per column. */
const canonicalTable: fc.Arbitrary<AdfNode> = fc
  .tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 2 }))
  .chain(([width, bodyRows]) =>
    fc.tuple(
      fc.array(fc.constantFrom(undefined, "center", "end"), { minLength: width, maxLength: width }),
      fc.array(fc.array(fc.option(cellInline, { nil: undefined }), { minLength: width, maxLength: width }), {
        minLength: bodyRows + 1,
        maxLength: bodyRows + 1,
      }),
    ),
  )
  .map(([align, rows]) => ({
    type: "table",
    content: rows.map((cells, row) => ({
      type: "tableRow",
      content: cells.map((inline, column) => {
        const alignment = align[column];
        const paragraph: AdfNode = {
          type: "paragraph",
          ...(alignment === undefined ? {} : { marks: [{ type: "alignment", attrs: { align: alignment } }] }),
          content: inline ?? [],
        };
        return { type: row === 0 ? "tableHeader" : "tableCell", content: [paragraph] };
      }),
    })),
  }));

/** A task list (ids are numbered afterwards, in document order, by `numberTasks`). */
const canonicalTaskList: fc.Arbitrary<AdfNode> = fc.letrec<{ tasks: AdfNode }>((tie) => ({
  tasks: fc
    .array(
      fc.tuple(
        fc.boolean(),
        canonicalInline(true),
        fc.option(tie("tasks"), { nil: undefined, depthSize: "small" }),
      ),
      { minLength: 1, maxLength: 3 },
    )
    .map(([...items]) => ({
      type: "taskList",
      attrs: { localId: "" },
      content: items.flatMap(([done, inline, nested]) => [
        { type: "taskItem", attrs: { localId: "", state: done ? "DONE" : "TODO" }, content: inline },
        ...(nested === undefined ? [] : [nested]),
      ]),
    })),
})).tasks;

/** `doc` with its task lists' and tasks' ids numbered in document order, as the reader numbers them. */
function numberTasks(input: AdfDoc): AdfDoc {
  const ids = { lists: 0, items: 0 };
  const walk = (node: AdfNode): AdfNode => {
    let attrs = node.attrs;
    if (node.type === "taskList") attrs = { localId: `task-list-${++ids.lists}` };
    if (node.type === "taskItem") attrs = { localId: `task-${++ids.items}`, state: node.attrs?.state };
    const content = node.content?.map(walk);
    return {
      ...node,
      ...(attrs === undefined ? {} : { attrs }),
      ...(content === undefined ? {} : { content }),
    };
  };
  return walk(input as AdfNode) as AdfDoc;
}

/**
 * Documents of supported nodes only, each in the form the parser gives back, each where ADF's schema lets
 * it be: a list item and a quote hold paragraphs, lists and code blocks (a list item task lists too).
 */
const canonicalBlocks = fc.letrec<{ block: AdfNode; inner: AdfNode; list: AdfNode; item: AdfNode }>(
  (tie) => ({
    block: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      canonicalInline(true).map((content) => para(...content)),
      fc
        .tuple(fc.integer({ min: 1, max: 6 }), canonicalInline(false))
        .map(([level, content]): AdfNode => ({ type: "heading", attrs: { level }, content })),
      codeBlock,
      fc.constant<AdfNode>({ type: "rule" }),
      tie("list"),
      canonicalTaskList,
      canonicalTable,
      fc
        .array(tie("inner"), { minLength: 1, maxLength: 3 })
        .map((content): AdfNode => ({ type: "blockquote", content })),
    ),
    inner: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      canonicalInline(true).map((content) => para(...content)),
      codeBlock,
      tie("list"),
    ),
    list: fc.oneof(
      fc
        .array(tie("item"), { minLength: 1, maxLength: 3 })
        .map((content): AdfNode => ({ type: "bulletList", content })),
      fc
        .tuple(
          fc.option(fc.integer({ min: 0, max: 120 }), { nil: undefined }),
          fc.array(tie("item"), { minLength: 1, maxLength: 3 }),
        )
        .map(
          ([order, content]): AdfNode =>
            order === undefined
              ? { type: "orderedList", content }
              : { type: "orderedList", attrs: { order }, content },
        ),
    ),
    item: fc
      .tuple(canonicalInline(true), fc.array(fc.oneof(tie("inner"), canonicalTaskList), { maxLength: 2 }))
      .map(([first, rest]) => item(para(...first), ...rest)),
  }),
);
const canonicalDoc = fc
  .array(canonicalBlocks.block, { minLength: 1, maxLength: 5 })
  .map((content) => numberTasks(doc(...content)));

/** Nodes Markdown cannot express, and supported nodes in forms it cannot write exactly. */
const oddBlock: fc.Arbitrary<AdfNode> = fc.oneof(
  fc.constantFrom(TABLE, PANEL, MEDIA, {
    type: "expand",
    attrs: { title: "More" },
    content: [para(text("x"))],
  }),
  fc
    .constantFrom(
      MENTION,
      EMOJI,
      STATUS,
      { type: "inlineCard", attrs: { url: "https://x" } },
      { type: "date", attrs: { timestamp: "1700000000000" } },
    )
    .chain((inline) =>
      fc
        .tuple(canonicalInline(true), fc.nat(3))
        .map(([rest, at]) => para(...rest.slice(0, at), inline, ...rest.slice(at))),
    ),
  fc
    .array(
      fc.tuple(
        anyText,
        fc.oneof(canonicalMarks, fc.constant([{ type: "underline" }]), fc.constant([EM, STRONG])),
      ),
      { maxLength: 4 },
    )
    .map((runs) => para(...runs.map(([value, marks]) => text(value, ...marks)))),
  fc.constantFrom<AdfNode>(
    para(),
    { type: "paragraph", attrs: { localId: "abc" }, content: [text("x")] },
    { type: "paragraph", marks: [{ type: "alignment", attrs: { align: "center" } }], content: [text("x")] },
    { type: "heading", attrs: { level: 2, localId: "h" }, content: [text("x")] },
    { type: "codeBlock", attrs: { language: "two words" }, content: [text("x")] },
    { type: "codeBlock", content: [text("x", STRONG)] },
    { type: "decisionList", attrs: { localId: "d" }, content: [] },
    { type: "taskList", attrs: { localId: "t" }, content: [] },
    { type: "someFutureNode", attrs: { "weird key": [1, null, { a: "\u2028" }] } },
    { type: "rule", attrs: { localId: "r" } },
    {
      type: "bulletList",
      content: [{ type: "listItem", attrs: { localId: "li" }, content: [para(text("x"))] }],
    },
    para(text("ends with a break"), { type: "hardBreak" }),
    para(text("odd target", link("<>\\"))),
    para(text("a"), text("b")),
  ),
);
/** Nodes of known and unknown types with any JSON in their fields, as a careless server might send. */
const garbageNode: fc.Arbitrary<AdfNode> = fc
  .record(
    {
      type: fc.constantFrom(
        "paragraph",
        "heading",
        "codeBlock",
        "bulletList",
        "orderedList",
        "blockquote",
        "rule",
        "listItem",
        "text",
        "hardBreak",
        "doc",
        "x",
      ),
      attrs: fc.jsonValue({ maxDepth: 2 }),
      content: fc.oneof(
        fc.jsonValue({ maxDepth: 2 }),
        fc.array(fc.oneof(oddBlock, fc.jsonValue({ maxDepth: 1 })), { maxLength: 2 }),
      ),
      marks: fc.jsonValue({ maxDepth: 2 }),
      text: fc.jsonValue({ maxDepth: 1 }),
    },
    { requiredKeys: ["type"] },
  )
  .map((node) => JSON.parse(JSON.stringify(node)));

const anyDoc = fc
  .array(
    fc.oneof(
      canonicalBlocks.block,
      oddBlock,
      garbageNode,
      fc
        .array(oddBlock, { minLength: 1, maxLength: 2 })
        .map((content): AdfNode => ({ type: "blockquote", content })),
    ),
    {
      minLength: 1,
      maxLength: 6,
    },
  )
  .map((content) => doc(...content));

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

/**
 * fast-check generators of ADF documents for the converter's properties (backends/tracker/adf.test.ts): text
 * chosen to break a careless escaper; documents of the nodes Markdown writes, each where ADF's schema lets it
 * be and in the form the reader gives back (`canonicalDoc`); nodes Markdown cannot write exactly
 * (`oddBlock`); and JSON of any shape where nodes go (`anyDoc`). Plus the node builders and fixtures the
 * golden tests share.
 */
import fc from "fast-check";
import type { AdfDoc, AdfMark, AdfNode } from "../backends/tracker/adf.js";

export const text = (value: string, ...marks: AdfMark[]): AdfNode =>
  marks.length === 0 ? { type: "text", text: value } : { type: "text", text: value, marks };
export const para = (...content: AdfNode[]): AdfNode => ({ type: "paragraph", content });
export const item = (...content: AdfNode[]): AdfNode => ({ type: "listItem", content });
export const doc = (...content: AdfNode[]): AdfDoc => ({ type: "doc", version: 1, content });
export const STRONG = { type: "strong" };
export const EM = { type: "em" };
export const link = (href: string, title?: string): AdfMark => ({
  type: "link",
  attrs: title === undefined ? { href } : { href, title },
});

export const TABLE: AdfNode = {
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
export const PANEL: AdfNode = {
  type: "panel",
  attrs: { panelType: "info" },
  content: [para(text("Heads up"))],
};
export const MENTION: AdfNode = {
  type: "mention",
  attrs: { id: "5b10a2844c20165700ede21g", text: "@Ann", accessLevel: "" },
};
export const EMOJI: AdfNode = { type: "emoji", attrs: { shortName: ":grinning:", id: "1f600", text: "😀" } };
export const STATUS: AdfNode = {
  type: "status",
  attrs: { text: "IN PROGRESS", color: "blue", localId: "s1" },
};
export const MEDIA: AdfNode = {
  type: "mediaSingle",
  attrs: { layout: "center" },
  content: [
    { type: "media", attrs: { id: "6e7c7f2c", type: "file", collection: "", width: 640, height: 480 } },
  ],
};

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
export const canonicalInline = (breaks: boolean): fc.Arbitrary<AdfNode[]> =>
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
export const canonicalDoc = fc
  .array(canonicalBlocks.block, { minLength: 1, maxLength: 5 })
  .map((content) => numberTasks(doc(...content)));

/** Nodes Markdown cannot express, and supported nodes in forms it cannot write exactly. */
export const oddBlock: fc.Arbitrary<AdfNode> = fc.oneof(
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

export const anyDoc = fc
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

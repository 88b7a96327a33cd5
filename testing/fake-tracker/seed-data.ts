/**
 * The fake tracker's seed data: deterministic, and tricky for YAML frontmatter, Markdown and quoting (summaries,
 * labels, priorities, and ADF descriptions with paragraphs, lists, code and marks; every 10th a table, a panel
 * and a mention).
 */
import type { AdfJson } from "./types.js";
import { ALICE_ACCOUNT } from "./vendor-data.js";

export const SEED_SUMMARIES: readonly ((n: number) => string)[] = [
  (n) => `Issue ${n}: a plain summary`,
  (n) => `Fix "quoted" value: colon ${n}`,
  (n) => `Ünïcödé 日本語 ${n} — émoji 🚀`,
  (n) => `--- ${n} looks like a fence`,
  (n) => `# ${n} starts like a heading`,
  (n) => `key: value # ${n}`,
  (n) => `'single' & <angle> [brackets] {braces} ${n}`,
  (n) => `Backslash \\ pipe | percent % ${n}`,
];

export const SEED_LABELS: readonly (readonly string[])[] = [
  [],
  ["backend"],
  ["frontend", "ux"],
  ["needs-triage"],
  ["bug", "p1", "customer:acme"],
];

export const SEED_PRIORITIES: readonly (string | null)[] = [
  "Medium",
  "High",
  "Low",
  null,
  "Highest",
  "Lowest",
];

const adfText = (text: string, marks?: readonly AdfJson[]): AdfJson =>
  marks === undefined ? { type: "text", text } : { type: "text", text, marks };
const adfParagraph = (...content: AdfJson[]): AdfJson => ({ type: "paragraph", content });
const adfListItem = (text: string): AdfJson => ({ type: "listItem", content: [adfParagraph(adfText(text))] });
const adfCell = (type: "tableHeader" | "tableCell", text: string): AdfJson => ({
  type,
  attrs: {},
  content: [adfParagraph(adfText(text))],
});

/** The every-10th extras: a table, a panel and a mention. */
function seedExtras(n: number): AdfJson[] {
  const row = (type: "tableHeader" | "tableCell", cells: string[]): AdfJson => ({
    type: "tableRow",
    content: cells.map((text) => adfCell(type, text)),
  });
  return [
    {
      type: "table",
      attrs: { isNumberColumnEnabled: false, layout: "default" },
      content: [row("tableHeader", ["Field", "Value"]), row("tableCell", ["number", String(n)])],
    },
    { type: "panel", attrs: { panelType: "info" }, content: [adfParagraph(adfText(`Panel of issue ${n}`))] },
    adfParagraph(
      adfText("Ping "),
      { type: "mention", attrs: { id: ALICE_ACCOUNT, text: "@Alice Example", accessLevel: "" } },
      adfText(" about it."),
    ),
  ];
}

/** Paragraphs, lists, code and marks; every 10th (from 7) has none; every 10th (from 10) adds `seedExtras`. */
export function seedDescription(n: number): AdfJson | null {
  if (n % 10 === 7) return null;
  const content: AdfJson[] = [
    { type: "heading", attrs: { level: 2 }, content: [adfText(`Context ${n}`)] },
    adfParagraph(
      adfText(`Description of issue ${n}: `),
      adfText("bold", [{ type: "strong" }]),
      adfText(", "),
      adfText("emphasis", [{ type: "em" }]),
      adfText(", "),
      adfText("code", [{ type: "code" }]),
      adfText(" and "),
      adfText("a link", [{ type: "link", attrs: { href: `https://example.com/issues/${n}` } }]),
      adfText("."),
    ),
    { type: "bulletList", content: [adfListItem("first point"), adfListItem("--- not a rule")] },
    {
      type: "orderedList",
      attrs: { order: 1 },
      content: [adfListItem("step one"), adfListItem("# not a heading")],
    },
    { type: "codeBlock", attrs: { language: "yaml" }, content: [adfText(`id: ${n}\nquote: "a: b"\n---`)] },
  ];
  if (n % 10 === 0) content.push(...seedExtras(n));
  return { type: "doc", version: 1, content };
}

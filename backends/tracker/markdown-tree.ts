/**
 * The one CommonMark + GFM parser and printer of tracker descriptions: the unified ecosystem's
 * `mdast-util-from-markdown` with `micromark-extension-gfm` (tables, task lists, strikethrough, autolink
 * literals, footnotes) reads Markdown into a syntax tree (mdast), `mdast-util-to-markdown` with GFM's
 * extension writes one. adf-from-markdown.ts and adf-to-markdown.ts map those trees to ADF and back.
 *
 * The packages are ES modules, loaded on first use with `createRequire` (node ≥ 22.16 requires ES modules;
 * the helper's bundle turns the call into a bundled `require`, scripts/bundle.ts): a helper start, a fetch
 * with nothing to render and a push that changes no description never load them.
 *
 * Printing options are the canonical spelling a description reads back in: `-` bullets, `_em_`, `**strong**`,
 * `---` rules, fenced code with backticks, a hard break as a backslash at the line's end. Two lists in a row
 * that Markdown would read as one (both bulleted, or both numbered with the same `.` or `)`) are kept apart by
 * an empty HTML comment `<!-- -->` (CommonMark's idiom), the only HTML the reader accepts (it ignores it).
 */
import { createRequire } from "node:module";
import type { Html, List, Nodes, Parents, Root } from "mdast";

declare module "mdast" {
  interface ListData {
    /** Which of `.` and `)` an ordered list is written with: mdast does not keep it, the printer needs it. */
    delimiter?: "." | ")";
  }
}

type FromMarkdown = typeof import("mdast-util-from-markdown").fromMarkdown;
type ToMarkdown = typeof import("mdast-util-to-markdown").toMarkdown;

/**
 * The loaded packages with their options built once: building GFM's extensions for each description took
 * ~40% of a parse (micromark combines them on every call as it is).
 */
interface Packages {
  readonly fromMarkdown: FromMarkdown;
  readonly readOptions: Parameters<FromMarkdown>[1];
  readonly toMarkdown: ToMarkdown;
  readonly printOptions: Parameters<ToMarkdown>[1];
}

let packages: Packages | undefined;

function load(): Packages {
  if (packages) return packages;
  const fromMarkdown = createRequire(import.meta.url)(
    "mdast-util-from-markdown",
  ) as typeof import("mdast-util-from-markdown");
  const toMarkdown = createRequire(import.meta.url)(
    "mdast-util-to-markdown",
  ) as typeof import("mdast-util-to-markdown");
  const gfm = createRequire(import.meta.url)(
    "micromark-extension-gfm",
  ) as typeof import("micromark-extension-gfm");
  const gfmMdast = createRequire(import.meta.url)("mdast-util-gfm") as typeof import("mdast-util-gfm");
  packages = {
    fromMarkdown: fromMarkdown.fromMarkdown,
    readOptions: { extensions: [gfm.gfm()], mdastExtensions: [gfmMdast.gfmFromMarkdown()] },
    toMarkdown: toMarkdown.toMarkdown,
    printOptions: printOptions(toMarkdown.defaultHandlers, gfmMdast.gfmToMarkdown()),
  };
  return packages;
}

/** Markdown as a CommonMark + GFM syntax tree, every node with its position (1-based lines). */
export function parseMarkdownTree(markdown: string): Root {
  const { fromMarkdown, readOptions } = load();
  return fromMarkdown(markdown, readOptions);
}

/** `.` or `)`: the delimiter after the number of the first item of `list` in `source`. */
export function orderedDelimiter(list: List, source: string): "." | ")" {
  const offset = list.position?.start.offset ?? 0;
  return /^[0-9]+\)/.test(source.slice(offset, offset + 12)) ? ")" : ".";
}

/** The Markdown of `tree` in the canonical spelling. */
export function printMarkdownTree(tree: Root): string {
  const { toMarkdown, printOptions } = load();
  return toMarkdown(tree, printOptions);
}

function printOptions(
  defaultHandlers: typeof import("mdast-util-to-markdown").defaultHandlers,
  gfm: ReturnType<typeof import("mdast-util-gfm").gfmToMarkdown>,
): Parameters<ToMarkdown>[1] {
  return {
    extensions: [gfm],
    bullet: "-",
    bulletOther: "*",
    bulletOrdered: ".",
    emphasis: "_",
    strong: "*",
    rule: "-",
    fence: "`",
    fences: true,
    listItemIndent: "one",
    incrementListMarker: true,
    resourceLink: false,
    handlers: {
      // Each list with its own marker: `-`, or the ordered list's `.` or `)` (its data says which); never
      // the printer's alternation between neighbouring lists, which `separateLists` makes unneeded.
      list(node, parent, state, info) {
        const delimiter = node.data?.delimiter ?? ".";
        const saved = state.options.bulletOrdered;
        state.options.bulletOrdered = delimiter;
        state.bulletLastUsed = undefined;
        try {
          return defaultHandlers.list(node, parent as Parents | undefined, state, info);
        } finally {
          state.options.bulletOrdered = saved;
        }
      },
    },
  };
}

/**
 * `blocks` with a `<!-- -->` between each two lists in a row that Markdown would read as one list (both
 * bulleted, or both numbered with the same `.` or `)`).
 */
export function separateLists<T extends Nodes>(blocks: readonly T[]): (T | Html)[] {
  const out: (T | Html)[] = [];
  for (const block of blocks) {
    const previous = out.at(-1);
    if (previous !== undefined && sameKindOfList(previous, block))
      out.push({ type: "html", value: LIST_SEPARATOR });
    out.push(block);
  }
  return out;
}

const LIST_SEPARATOR = "<!-- -->";

function sameKindOfList(left: Nodes, right: Nodes): boolean {
  if (left.type !== "list" || right.type !== "list" || left.ordered !== right.ordered) return false;
  if (!left.ordered) return true;
  const delimiter = (list: List) => list.data?.delimiter ?? ".";
  return delimiter(left) === delimiter(right);
}

/** The comments that keep two lists apart: `<!-- -->`, and the printer's own `<!---->`. */
export function isListSeparator(html: string): boolean {
  return /^<!--\s*-->$/.test(html.trim());
}

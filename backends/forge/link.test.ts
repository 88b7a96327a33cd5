/**
 * `linkTarget` (backends/forge/link.ts) against the `Link` headers GitHub documents and RFC 8288's
 * examples, and random headers: any text gives a target that was written between `<` and `>` in it, or
 * nothing, never a throw; a header built from links gives the first target whose `rel` names the relation;
 * only the first 64 KiB are read.
 */
import test from "ava";
import fc from "fast-check";
import { fuzzParams } from "../../testing/fuzz.js";
import { linkTarget } from "./link.js";

/** GitHub's example in "Using pagination in the REST API" (docs.github.com), as the API sends it. */
const GITHUB =
  '<https://api.github.com/repositories/1300192/issues?page=2>; rel="prev", ' +
  '<https://api.github.com/repositories/1300192/issues?page=4>; rel="next", ' +
  '<https://api.github.com/repositories/1300192/issues?page=515>; rel="last", ' +
  '<https://api.github.com/repositories/1300192/issues?page=1>; rel="first"';

test("recorded: GitHub's Link header gives each relation's target", (t) => {
  t.is(linkTarget(GITHUB, "next"), "https://api.github.com/repositories/1300192/issues?page=4");
  t.is(linkTarget(GITHUB, "prev"), "https://api.github.com/repositories/1300192/issues?page=2");
  t.is(linkTarget(GITHUB, "last"), "https://api.github.com/repositories/1300192/issues?page=515");
  t.is(linkTarget(GITHUB, "first"), "https://api.github.com/repositories/1300192/issues?page=1");
  // The last page has no next.
  t.is(linkTarget(GITHUB.replace(/<[^>]*>; rel="next", /, ""), "next"), undefined);
});

test("recorded: RFC 8288's forms: parameters around rel, several relations, a relative target, case", (t) => {
  t.is(
    linkTarget('<http://example.com/TheBook/chapter2>; rel="previous"; title="previous chapter"', "previous"),
    "http://example.com/TheBook/chapter2",
  );
  t.is(linkTarget('</TheBook/chapter4>; title="next chapter"; rel="next"', "next"), "/TheBook/chapter4");
  t.is(
    linkTarget('<http://example.org/>; rel="start http://example.net/relation/other"', "start"),
    "http://example.org/",
  );
  t.is(linkTarget("<https://x/a>; REL=NEXT", "next"), "https://x/a");
  t.is(linkTarget('<https://x/a>;rel = "next"', "next"), "https://x/a");
  t.is(linkTarget('<https://x/a>; rel="nextpage"', "next"), undefined, "a relation is a whole word");
  t.is(linkTarget('<https://x/a>; title="rel=next"', "next"), undefined, "rel only as a parameter");
  t.is(linkTarget("<>; rel=next", "next"), "", "an empty target is given as such: the caller ends the walk");
});

test("only the first 64 KiB of a header are read: a next link after them is not seen", (t) => {
  const filler = `<https://x/a>; rel="other", `.repeat(Math.ceil(70_000 / 27));
  t.is(linkTarget(`${filler}<https://x/next>; rel="next"`, "next"), undefined);
  t.is(linkTarget(`<https://x/next>; rel="next", ${filler}`, "next"), "https://x/next");
});

// ---------------------------------------------------------------------------------------------------------
// Properties.

const piece = fc.oneof(
  fc.constantFrom(
    "<",
    ">",
    ";",
    ",",
    "=",
    '"',
    " ",
    "rel",
    "rel=",
    "next",
    'rel="next"',
    "https://x/",
    "\n",
    "\\",
  ),
  fc.string({ maxLength: 6 }),
);
const header = fc.array(piece, { maxLength: 16 }).map((parts) => parts.join(""));

test("property: any header gives nothing or a target written between < and > in it, never a throw", (t) => {
  fc.assert(
    fc.property(
      fc.oneof(header, fc.string({ unit: "binary", maxLength: 200 })),
      fc.constantFrom("next", "last"),
      (text, relation) => {
        const target = linkTarget(text, relation);
        return target === undefined || text.includes(`<${target}>`);
      },
    ),
    fuzzParams(1000),
  );
  t.pass();
});

/** A token as a relation or parameter value: no quotes, separators or spaces. */
const token = fc.stringMatching(/^[a-z][a-z0-9.-]{0,8}$/);

interface Link {
  readonly target: string;
  readonly rels: string[];
  readonly quoted: boolean;
  readonly title: string | undefined;
}

const link: fc.Arbitrary<Link> = fc.record({
  target: fc.oneof(fc.webUrl({ withQueryParameters: true }), fc.constantFrom("/issues?page=2", "")),
  rels: fc.array(fc.oneof(token, fc.constantFrom("next", "NEXT", "prev", "last")), {
    minLength: 1,
    maxLength: 3,
  }),
  quoted: fc.boolean(),
  title: fc.option(token, { nil: undefined }),
});

function written(l: Link): string {
  // Several relations need quotes; one may go without.
  const rel = l.quoted || l.rels.length > 1 ? `rel="${l.rels.join(" ")}"` : `rel=${l.rels[0]}`;
  return `<${l.target}>; ${l.title === undefined ? "" : `title="${l.title}"; `}${rel}`;
}

test("property: a header of links gives the target of the first link whose rel names the relation", (t) => {
  fc.assert(
    fc.property(fc.array(link, { maxLength: 5 }), (links) => {
      const expected = links.find((l) => l.rels.some((rel) => rel.toLowerCase() === "next"))?.target;
      return linkTarget(links.map(written).join(", "), "next") === expected;
    }),
    fuzzParams(500),
  );
  t.pass();
});

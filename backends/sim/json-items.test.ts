/**
 * The item splitter of a streamed JSON array against `JSON.stringify` and `JSON.parse`: any array of any
 * JSON values, with any white space between its parts, split into chunks anywhere (inside a multi-byte
 * character, between a backslash and what it escapes), gives back each item's exact text; text that is not
 * one whole array is an error, never a wait for more or a wrong item.
 */
import test from "ava";
import fc from "fast-check";
import { holds } from "../../testing/fuzz.js";
import { JsonItemSplitter, JsonItemsError } from "./json-items.js";

/** The items of `text` when it arrives cut at `cuts` (byte offsets), and whether it ended as one array. */
function split(text: string | Buffer, cuts: readonly number[] = [], max = 1 << 20): string[] {
  const bytes = typeof text === "string" ? Buffer.from(text) : text;
  const splitter = new JsonItemSplitter(max);
  const items: string[] = [];
  let from = 0;
  for (const cut of [...new Set(cuts)].filter((at) => at > 0 && at < bytes.length).sort((a, b) => a - b)) {
    items.push(...splitter.push(bytes.subarray(from, cut)));
    from = cut;
  }
  items.push(...splitter.push(bytes.subarray(from)));
  splitter.end();
  return items;
}

const space = fc.constantFrom("", " ", "\n", "\t ", "\r\n");

/** An array's text with white space around every part, and its items' texts. */
const spacedArray = fc
  .tuple(fc.array(fc.tuple(fc.jsonValue(), space, space), { maxLength: 8 }), space, space)
  .map(([items, before, after]) => {
    const texts = items.map(([value]) => JSON.stringify(value));
    const inner = items.map(([, a, b], i) => `${a}${texts[i]}${b}`).join(",");
    return { text: `${before}[${inner}${items.length === 0 ? after : ""}]${after}`, texts };
  });

test("property: any JSON array cut anywhere gives back the exact text of each item", (t) => {
  holds(
    t,
    fc.property(spacedArray, fc.array(fc.nat(4000)), ({ text, texts }, cuts) => {
      const items = split(text, cuts);
      return JSON.stringify(items) === JSON.stringify(texts);
    }),
    300,
  );
});

test("property: strings with escapes and multi-byte characters survive any cut", (t) => {
  const tricky = fc.string({
    unit: fc.constantFrom('"', "\\", "\u00e9", "\u{1f600}", "]", "}", ",", "a", "\n"),
  });
  holds(
    t,
    fc.property(
      fc.array(fc.record({ body: tricky }), { maxLength: 5 }),
      fc.array(fc.nat(300)),
      (values, cuts) => {
        const items = split(JSON.stringify(values), cuts);
        return JSON.stringify(items.map((item) => JSON.parse(item))) === JSON.stringify(values);
      },
    ),
    300,
  );
});

test("property: a whole array cut short anywhere is an error at its end, never a shorter array", (t) => {
  holds(
    t,
    fc.property(
      spacedArray.filter(({ text }) => text.trim().length > 2),
      fc.nat(),
      ({ text }, at) => {
        const bytes = Buffer.from(text.trimEnd());
        const cut = bytes.subarray(0, at % bytes.length);
        try {
          split(cut);
          return false;
        } catch (error) {
          return error instanceof JsonItemsError;
        }
      },
    ),
    300,
  );
});

test("the structure between items is checked, with where it broke", (t) => {
  const cases: [string, string][] = [
    ["", "the text is empty"],
    ["  ", "the text is empty"],
    ["{}", 'expected "[" at byte 0, found "{"'],
    ["<html>", 'expected "[" at byte 0, found "<"'],
    ["[1 2]", 'expected "," or "]" after item 1 at byte 3, found "2"'],
    ["[1,]", 'expected an item at byte 3, found "]"'],
    ["[,1]", 'expected an item at byte 1, found ","'],
    ["[1]x", 'expected the end after "]" at byte 3, found "x"'],
    ["[{}", "the text stops after 3 bytes, inside the array (after item 1)"],
    ['[{"a":"]', "the text stops after 8 bytes, inside the array (after item 0)"],
  ];
  for (const [text, message] of cases) {
    t.throws(() => split(text), { instanceOf: JsonItemsError, message }, text);
  }
  t.deepEqual(split("[]"), []);
  t.deepEqual(split(' [ 1 , "x" , {"a":[1,{"b":"]"}]} , null ] '), [
    "1",
    '"x"',
    '{"a":[1,{"b":"]"}]}',
    "null",
  ]);
});

test("an item longer than the bound is refused as soon as its bytes pass it, naming the item", (t) => {
  const splitter = new JsonItemSplitter(100);
  t.deepEqual(splitter.push(Buffer.from(`[${JSON.stringify("x".repeat(90))},`)), [`"${"x".repeat(90)}"`]);
  t.deepEqual(splitter.push(Buffer.from(`{"body":"${"y".repeat(60)}`)), []);
  const error = t.throws(() => splitter.push(Buffer.from("y".repeat(60))), { instanceOf: JsonItemsError });
  t.is(error?.tooLarge, 2);
  t.is(error?.message, "item 2 is longer than 100 bytes");
  t.throws(() => split(`[${JSON.stringify("z".repeat(200))}]`, [], 100), {
    message: "item 1 is longer than 100 bytes",
  });
});

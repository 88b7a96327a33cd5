/**
 * The pagination guard on its own: honest walks pass, any repeated pointer (the first URL, the previous
 * one, one from far back, the same one twice in a row) and a walk past the cap are errors whose message names
 * the server, the listing, the pointer and what to do; `SVC_MAX_RESULT_PAGES` goes through the settings reader.
 */
import test from "ava";
import fc from "fast-check";
import { fuzzParams } from "../testing/fuzz.js";
import { DEFAULT_MAX_PAGES, maxPagesSetting, PageWalk, PaginationError } from "./pagination.js";
import { SettingError } from "./settings.js";

const SERVER = "https://acme.atlassian.net";

const FIRST = "/list?limit=2";

function walk(maxPages: number, first: string | undefined): PageWalk {
  return new PageWalk({
    server: SERVER,
    listing: "listing the pages of space DOCS",
    pointer: "_links.next",
    first,
    maxPages,
  });
}

/** Follows `pointers` in order; returns the error thrown, or undefined when the walk accepted them all. */
function follow(guard: PageWalk, pointers: readonly string[]): PaginationError | undefined {
  try {
    for (const pointer of pointers) guard.follow(pointer);
    return undefined;
  } catch (error) {
    if (error instanceof PaginationError) return error;
    throw error;
  }
}

test("an honest walk of distinct pointers passes, up to the cap exactly", (t) => {
  const pointers = Array.from({ length: 99 }, (_, index) => `/list?limit=2&cursor=c${index}`);
  t.is(follow(walk(100, FIRST), pointers), undefined, "99 pointers: 100 result pages, the cap");
});

const repeats: readonly {
  name: string;
  first: string | undefined;
  pointers: string[];
  page: number;
  target: string;
}[] = [
  { name: "back to the first URL", first: FIRST, pointers: [FIRST], page: 1, target: "to itself" },
  {
    name: "the same pointer twice in a row",
    first: FIRST,
    pointers: ["/a", "/a"],
    page: 2,
    target: "to itself",
  },
  {
    name: "back to an earlier page",
    first: FIRST,
    pointers: ["/a", "/b", "/c", "/a"],
    page: 4,
    target: "back to result page 2",
  },
  {
    name: "a token listing (no first URL) repeating its first token",
    first: undefined,
    pointers: ["tok1", "tok2", "tok1"],
    page: 3,
    target: "back to result page 2",
  },
];

for (const { name, first, pointers, page, target } of repeats) {
  test(`a repeated pointer is an error: ${name}`, (t) => {
    const error = follow(walk(100, first), pointers);
    const last = pointers.at(-1) as string;
    t.is(
      error?.message,
      `listing the pages of space DOCS at ${SERVER} goes round in a circle: result page ${page} points ${target} ` +
        `(_links.next ${JSON.stringify(last)}); svc stopped after ${page} result pages instead of asking forever. ` +
        `The server (or a proxy in front of it) is at fault: report it to the admins of ${SERVER}`,
    );
    t.is(error?.code, "SVC_BACKEND");
  });
}

test("one pointer past the cap is an error that names the setting and a larger value", (t) => {
  const error = follow(walk(3, FIRST), ["/p2", "/p3", "/p4"]);
  t.is(
    error?.message,
    `listing the pages of space DOCS at ${SERVER} still points to a next result page (_links.next "/p4") after ` +
      "3 result pages, the most svc reads in one listing (SVC_MAX_RESULT_PAGES=3). If the listing is really that " +
      `long, run the command again with e.g. SVC_MAX_RESULT_PAGES=6; if not, report it to the admins of ${SERVER}`,
  );
});

test("a long pointer is shortened in the message, and a repeat of it is still caught", (t) => {
  const long = `/list?cursor=${"x".repeat(100_000)}`;
  const error = follow(walk(100, FIRST), [long, long]);
  t.truthy(error);
  t.true((error?.message.length ?? Number.POSITIVE_INFINITY) < 1000);
});

test("any sequence with a repeat is stopped at its first repeat; any without one passes", (t) => {
  fc.assert(
    fc.property(fc.array(fc.string({ maxLength: 4 }), { maxLength: 30 }), (pointers) => {
      const guard = walk(1000, undefined);
      const firstRepeat = pointers.findIndex((pointer, index) => pointers.indexOf(pointer) < index);
      const error = follow(guard, pointers);
      if (firstRepeat < 0) return error === undefined;
      return error !== undefined && (error.data.pages as number) === firstRepeat + 1;
    }),
    fuzzParams(100),
  );
  t.pass();
});

test("SVC_MAX_RESULT_PAGES: default, a whole number from 1, anything else a SettingError", (t) => {
  t.is(maxPagesSetting({}), DEFAULT_MAX_PAGES);
  t.is(maxPagesSetting({ SVC_MAX_RESULT_PAGES: "20" }), 20);
  for (const bad of ["0", "-1", "2k", "1e3", "ten"]) {
    const error = t.throws(() => maxPagesSetting({ SVC_MAX_RESULT_PAGES: bad }), {
      instanceOf: SettingError,
    });
    t.is(
      error?.message,
      `SVC_MAX_RESULT_PAGES=${JSON.stringify(bad)} is not a whole number from 1; use e.g. SVC_MAX_RESULT_PAGES=10000`,
    );
  }
});

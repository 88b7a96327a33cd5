/**
 * The pagination guard on its own: honest walks pass, any repeated pointer (the first URL, the previous
 * one, one from far back, the same one twice in a row) and a walk past the cap are errors whose message names
 * the server, the listing, the pointer and what to do; so is a walk past its time budget, however new each
 * pointer; `SVC_MAX_RESULT_PAGES` and `SVC_LISTING_TIMEOUT_MS` go through the settings reader.
 */
import { setTimeout as sleep } from "node:timers/promises";
import test from "ava";
import fc from "fast-check";
import { fuzzParams } from "../testing/fuzz.js";
import {
  DEFAULT_LISTING_TIMEOUT_MS,
  DEFAULT_MAX_PAGES,
  ListingDeadline,
  ListingTimeoutError,
  listingTimeoutSetting,
  maxPagesSetting,
  PageWalk,
  PaginationError,
} from "./pagination.js";
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

test("a walk past its time budget is stopped at its next result page, naming the listing, the server, the pages read and the setting", async (t) => {
  const guard = new PageWalk({
    server: SERVER,
    listing: "listing the pages of space DOCS",
    pointer: "_links.next",
    first: FIRST,
    budgetMs: 100,
  });
  guard.follow("/list?cursor=1");
  guard.follow("/list?cursor=2");
  await sleep(150);
  const error = t.throws(() => guard.follow("/list?cursor=3"), { instanceOf: ListingTimeoutError });
  t.is(
    error?.message,
    `listing the pages of space DOCS at ${SERVER} did not end within 100 ms (SVC_LISTING_TIMEOUT_MS, the ` +
      "longest svc gives one listing); svc stopped after 3 result pages. If the listing is really that long, " +
      `run the command again with e.g. SVC_LISTING_TIMEOUT_MS=200; if not, is ${SERVER} overloaded or stuck?`,
  );
  t.is(error?.code, "SVC_BACKEND");
});

test("an endless listing whose every pointer is new, each result page in time, is stopped by its budget long before the page cap", async (t) => {
  const timed = new PageWalk({
    server: SERVER,
    listing: "listing the pages of space DOCS",
    pointer: "_links.next",
    first: FIRST,
    budgetMs: 300,
  });
  let pages = 1;
  const error = await t.throwsAsync(async () => {
    for (;;) {
      await sleep(5);
      timed.follow(`/list?cursor=${pages}`);
      pages++;
    }
  });
  t.true(error instanceof ListingTimeoutError, `not the repeat guard or the page cap: ${error}`);
  t.true(pages > 1 && pages < DEFAULT_MAX_PAGES, `${pages} result pages`);
});

test("a ListingDeadline on its own (the simulator's one streamed answer) says what was read", async (t) => {
  const deadline = new ListingDeadline({
    server: SERVER,
    listing: "listing the issues of sim project demo",
    budgetMs: 50,
  });
  deadline.check("0 issues");
  await sleep(80);
  const error = t.throws(() => deadline.check("12000 issues"), { instanceOf: ListingTimeoutError });
  t.regex(
    error?.message ?? "",
    /^listing the issues of sim project demo at \S+ did not end within 50 ms .*svc stopped after 12000 issues\./,
  );
});

test("SVC_LISTING_TIMEOUT_MS: default ten minutes, whole milliseconds from 1, anything else a SettingError", (t) => {
  t.is(listingTimeoutSetting({}), DEFAULT_LISTING_TIMEOUT_MS);
  t.is(DEFAULT_LISTING_TIMEOUT_MS, 600_000);
  t.is(listingTimeoutSetting({ SVC_LISTING_TIMEOUT_MS: "1500" }), 1500);
  for (const bad of ["0", "-1", "10m", "1.5", "1e3"]) {
    const error = t.throws(() => listingTimeoutSetting({ SVC_LISTING_TIMEOUT_MS: bad }), {
      instanceOf: SettingError,
    });
    t.is(
      error?.message,
      `SVC_LISTING_TIMEOUT_MS=${JSON.stringify(bad)} is not a whole number of milliseconds from 1; use e.g. SVC_LISTING_TIMEOUT_MS=600000`,
    );
  }
});

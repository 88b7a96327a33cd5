import test from "ava";
import { blobLimit, limitGlob, usableBlobLimit } from "./blob-limit.js";

const twelve = Array.from({ length: 12 }, (_, index) => `issues/${String(index + 1).padStart(4, "0")}.md`);

/** The paths a `--no-cone` pattern of `limitGlob`'s kind (literal prefix, one bracket range, `*`) matches. */
function matches(glob: string, paths: readonly string[]): string[] {
  const literalChar = (char: string) => char.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  let source = "";
  for (let index = 0; index < glob.length; index++) {
    const char = glob.charAt(index);
    if (char === "\\") source += literalChar(glob.charAt(++index));
    else if (char === "*") source += ".*";
    else if (char === "[") {
      const end = glob.indexOf("]", index);
      source += glob.slice(index, end + 1);
      index = end;
    } else source += literalChar(char);
  }
  const pattern = new RegExp(`^${source}$`);
  return paths.filter((path) => pattern.test(path));
}

test("limitGlob picks the shortest prefix and a range of next characters that fits the limit", (t) => {
  t.is(limitGlob(twelve, "issues", 5), "issues/000[1-5]*");
  t.is(limitGlob(twelve, "issues", 12), "issues/0*");
  t.is(limitGlob(twelve, "issues", 1), "issues/0001*");
  t.is(limitGlob(twelve, "issues", 9), "issues/000*");
  t.is(limitGlob([], "issues", 5), "issues/*");
  const tenThousand = Array.from(
    { length: 10_000 },
    (_, index) => `issues/${String(index + 1).padStart(4, "0")}.md`,
  );
  t.is(limitGlob(tenThousand, "issues", 500), "issues/0[0-4]*");
  t.is(matches("issues/0[0-4]*", tenThousand).length, 499);
  t.is(limitGlob(["pages/98304.md", "pages/98305.md", "pages/12.md"], "pages", 2), "pages/1*");
});

test("every pattern limitGlob picks matches between 1 and limit files", (t) => {
  const ids = Array.from({ length: 1234 }, (_, index) => `pages/${(index * 7919) % 100_003}.md`);
  t.deepEqual(matches("issues/000[1-5]*", twelve), twelve.slice(0, 5));
  for (const limit of [1, 2, 5, 17, 100, 500, 1233]) {
    const glob = limitGlob(ids, "pages", limit);
    const count = matches(glob, ids).length;
    t.true(count >= 1 && count <= limit, `${glob}: ${count} files for limit ${limit}`);
  }
});

test("pattern characters in a prefix are matched literally", (t) => {
  t.is(limitGlob(["pages/a*b1.md", "pages/a*b2.md", "pages/c.md"], "pages", 1), "pages/a\\*b1*");
});

test("SVC_BLOB_LIMIT is off unless set", (t) => {
  t.is(blobLimit({}), 0);
  t.is(blobLimit({ SVC_BLOB_LIMIT: "5" }), 5);
  t.throws(() => blobLimit({ SVC_BLOB_LIMIT: "lots" }), {
    message: 'SVC_BLOB_LIMIT="lots" is not a whole number (0 for no limit); use e.g. SVC_BLOB_LIMIT=0',
  });
});

test("a blob limit needs git 2.39: an older git is refused with the user's command without it", async (t) => {
  const env = { SVC_BLOB_LIMIT: "5" };
  t.is(await usableBlobLimit({}, { version: [2, 30] }), 0, "no limit set: nothing to refuse");
  t.is(await usableBlobLimit(env, { version: [2, 39] }), 5);
  t.is(await usableBlobLimit(env, { version: [3, 0] }), 5);
  const refused = await t.throwsAsync(
    usableBlobLimit(env, {
      version: [2, 38],
      command: ["git", "clone", "--filter=blob:none", "svc::x y", "d"],
    }),
  );
  t.is(
    refused?.message,
    'SVC_BLOB_LIMIT=5 needs git 2.39 or later, and this is git 2.38: an older git fetches a refused checkout again file by file, so no limit holds; nothing was fetched. Run it without the limit: SVC_BLOB_LIMIT=0 git clone --filter=blob:none "svc::x y" d',
  );
  const unknown = await t.throwsAsync(usableBlobLimit(env, { version: [2, 30], command: undefined }));
  t.regex(unknown?.message ?? "", /this is git 2\.30: .*Run it without the limit: /);
});

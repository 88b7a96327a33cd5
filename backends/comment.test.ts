/**
 * The comment model (backends/comment.ts): the file a comment renders to, byte for byte (golden), its path
 * and key, and how a file's author is told to be the user's.
 */
import test from "ava";
import {
  commentKey,
  commentPath,
  commentSchema,
  commentToRecord,
  isCommentKey,
  isOwnComment,
  parseCommentPath,
  type ServerComment,
} from "./comment.js";
import { parseRecordFile, renderRecordFile } from "./record.js";
import { SIM_SCHEMA } from "./sim/schema.js";

const COMMENT: ServerComment = {
  id: "1000000001",
  parentKey: "42",
  author: "alice@example.com",
  authorId: "alice@example.com",
  body: "I can reproduce it.\n\n---\nnot: frontmatter\n",
  createdAt: "2026-11-28T09:00:00.000Z",
  updatedAt: "2026-11-28T09:05:00.123Z",
  version: 2,
};

test("a sim comment renders to these bytes: id, author, created_at, updated_at, version, then the body byte for byte", (t) => {
  const schema = commentSchema(SIM_SCHEMA, true);
  const record = commentToRecord(COMMENT, SIM_SCHEMA.fileName("42"), true);
  t.is(record.key, "comment:1000000001");
  t.is(record.path, "comments/0042/1000000001.md");
  t.is(record.version, 2);
  t.is(record.updatedAt, "2026-11-28T09:05:00.123Z");
  t.is(
    renderRecordFile(schema, record.content),
    '---\nid: 1000000001\nauthor: "alice@example.com"\ncreated_at: 2026-11-28T09:00:00.000Z\n' +
      "updated_at: 2026-11-28T09:05:00.123Z\nversion: 2\n---\nI can reproduce it.\n\n---\nnot: frontmatter\n",
  );
  t.deepEqual(parseRecordFile(schema, record.path, renderRecordFile(schema, record.content)), record.content);
});

test("a backend without comment versions renders no version line; an author with its account id stays one string", (t) => {
  const schema = commentSchema(SIM_SCHEMA, false);
  const record = commentToRecord(
    { ...COMMENT, id: "10007", author: "Jane Doe (5b10ac8d82e05b22cc7d4ef5)", version: null, body: "" },
    "issues/TEST-42.md",
    false,
  );
  t.is(record.path, "comments/TEST-42/10007.md");
  t.is(record.version, null);
  t.is(
    renderRecordFile(schema, record.content),
    '---\nid: 10007\nauthor: "Jane Doe (5b10ac8d82e05b22cc7d4ef5)"\ncreated_at: 2026-11-28T09:00:00.000Z\n' +
      "updated_at: 2026-11-28T09:05:00.123Z\n---\n",
  );
});

test("every comment field is the server's; the body is all a user writes", (t) => {
  const schema = commentSchema(SIM_SCHEMA, true);
  t.deepEqual(
    schema.fields.map((spec) => [spec.name, spec.serverControlled]),
    [
      ["id", true],
      ["author", true],
      ["created_at", true],
      ["updated_at", true],
      ["version", true],
    ],
  );
  t.is(schema.folder, "comments");
  t.is(schema.bodyProblem?.(" \n"), "the comment is empty; write its text below the `---` line");
  t.is(schema.bodyProblem?.("ok"), undefined);
});

test("keys and paths: comment:<id> never looks like a record key; only comments/<stem>/<name>.md is a comment file", (t) => {
  t.is(commentKey("7"), "comment:7");
  t.true(isCommentKey("comment:7"));
  for (const key of ["42", "TEST-42", "2818063"]) t.false(isCommentKey(key));
  t.is(commentPath("pages/2818063.md", "3200011"), "comments/2818063/3200011.md");
  t.deepEqual(parseCommentPath("comments/0042/new.md"), { stem: "0042", name: "new" });
  for (const path of ["comments/new.md", "comments/0042/x/y.md", "comments/0042/x.txt", "issues/0042.md"]) {
    t.is(parseCommentPath(path), undefined, path);
  }
});

test("your comment: the author is your name, or your id, or ends with your id in parentheses", (t) => {
  const me = { id: "5b10ac8d82e05b22cc7d4ef5", author: "Jane Doe (5b10ac8d82e05b22cc7d4ef5)" };
  t.true(isOwnComment("Jane Doe (5b10ac8d82e05b22cc7d4ef5)", me));
  t.true(isOwnComment("Jane D. (5b10ac8d82e05b22cc7d4ef5)", me), "a renamed display name is still you");
  t.false(isOwnComment("Jane Doe (0000)", me));
  t.true(isOwnComment("me@example.com", { id: "me@example.com", author: "me@example.com" }));
  t.false(isOwnComment("me@example.com.evil", { id: "me@example.com", author: "me@example.com" }));
});

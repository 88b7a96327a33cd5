import test from "ava";
import { resolveRecordConflicts, UnresolvableConflict } from "./resolve.js";

const FRONT = "---\nid: 1\ntitle: One\n";

test("a body hunk keeps our lines, then theirs that ours lack", (t) => {
  const text =
    `${FRONT}version: 3\n---\nBody\n` +
    "<<<<<<< HEAD\nagent-1 op-2\nshared line\n=======\nshared line\nagent-0 op-5\n>>>>>>> 1234abc\n" +
    "After\n";
  t.is(
    resolveRecordConflicts(text),
    `${FRONT}version: 3\n---\nBody\nagent-1 op-2\nshared line\nagent-0 op-5\nAfter\n`,
  );
});

test("a frontmatter hunk takes the server's side; a body hunk in the same file is still a union", (t) => {
  const text =
    `${FRONT}<<<<<<< HEAD\nstatus: done\nlabels: [a1]\n=======\nstatus: open\nlabels: [a2]\n>>>>>>> theirs\n` +
    "version: 4\n---\nBody\n<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> theirs\n";
  t.is(
    resolveRecordConflicts(text),
    `${FRONT}status: open\nlabels: [a2]\nversion: 4\n---\nBody\nmine\ntheirs\n`,
  );
});

test("the diff3 style's base section is dropped", (t) => {
  const text = `${FRONT}---\n<<<<<<< ours\nmine\n||||||| base\nold\n=======\ntheirs\n>>>>>>> theirs\n`;
  t.is(resolveRecordConflicts(text), `${FRONT}---\nmine\ntheirs\n`);
});

test("a file without markers is returned as it is", (t) => {
  const text = `${FRONT}---\n=== not a marker\nBody\n`;
  t.is(resolveRecordConflicts(text), text);
});

test("markers that do not pair up are refused", (t) => {
  for (const text of [
    `${FRONT}---\n<<<<<<< HEAD\nmine\n=======\ntheirs\n`,
    `${FRONT}---\nmine\n=======\ntheirs\n>>>>>>> x\n`,
    `${FRONT}---\n<<<<<<< HEAD\n<<<<<<< HEAD\n`,
  ]) {
    t.throws(() => resolveRecordConflicts(text), { instanceOf: UnresolvableConflict }, text);
  }
});

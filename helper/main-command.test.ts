/**
 * The helper's readers of git's commands: `parseHelperCommand` (helper/main.ts) for the command lines on
 * stdin, `parsePushSpec` (helper/session.ts) for a `push` line's refspec and `parseRequest`
 * (helper/stateless-connect.ts) for a protocol-v2 request's lines. Recorded lines are what git 2.39.5 wrote
 * to a logging helper for `git push`, `git push -f` and a `protocol.version=0` fetch; random lines give a
 * command or a refusal that names the line, never a throw.
 */
import test from "ava";
import fc from "fast-check";
import { fuzzParams } from "../testing/fuzz.js";
import { type HelperCommand, parseHelperCommand } from "./main.js";
import { parsePushSpec } from "./session.js";
import { parseRequest } from "./stateless-connect.js";

/**
 * Lines git 2.39.5 sent a logging helper that offered stateless-connect (answered `fallback`), import, push
 * and option: `git push` (with `-f`, with `--delete`), `git clone --filter=blob:none`, `git fetch`.
 */
const RECORDED: [string, HelperCommand][] = [
  ["capabilities", { name: "capabilities" }],
  ["option progress false", { name: "option", option: "progress", supported: true }],
  ["option verbosity 0", { name: "option", option: "verbosity", supported: true }],
  ["option verbosity 1", { name: "option", option: "verbosity", supported: true }],
  ["option from-promisor 1", { name: "option", option: "from-promisor", supported: true }],
  ["option filter blob:none", { name: "option", option: "filter", supported: false }],
  ["option cloning true", { name: "option", option: "cloning", supported: false }],
  ["list for-push", { name: "list", forPush: true }],
  ["list", { name: "list", forPush: false }],
  ["push HEAD:refs/heads/main", { name: "push", spec: "HEAD:refs/heads/main" }],
  ["push +HEAD:refs/heads/main", { name: "push", spec: "+HEAD:refs/heads/main" }],
  ["push :refs/heads/main", { name: "push", spec: ":refs/heads/main" }],
  ["import refs/heads/main", { name: "import" }],
  ["stateless-connect git-upload-pack", { name: "stateless-connect", service: "git-upload-pack" }],
];

test("recorded: each command line git sends is read as that command", (t) => {
  for (const [line, command] of RECORDED) t.deepEqual(parseHelperCommand(line), command, line);
});

test("another service is read as such (the helper answers fallback); an empty option name is unsupported", (t) => {
  t.deepEqual(parseHelperCommand("stateless-connect git-receive-pack"), {
    name: "stateless-connect",
    service: "git-receive-pack",
  });
  t.deepEqual(parseHelperCommand("stateless-connect"), { name: "stateless-connect", service: "" });
  t.deepEqual(parseHelperCommand("option"), { name: "option", option: "", supported: false });
});

test("a line git does not send is refused with a message naming it (at most 80 characters of it)", (t) => {
  t.deepEqual(parseHelperCommand("export"), {
    name: "unknown",
    refusal:
      'git-remote-svc: unknown command "export"; this helper speaks stateless-connect, import and push',
  });
  t.deepEqual(parseHelperCommand(" list"), {
    name: "unknown",
    refusal: 'git-remote-svc: unknown command " list"; this helper speaks stateless-connect, import and push',
  });
  const long = parseHelperCommand(`connect ${"x".repeat(10_000)}`);
  t.is(long.name, "unknown");
  t.true(long.name === "unknown" && long.refusal.length < 200);
});

test("recorded: refspecs of git push, git push -f and git push --delete; text without a colon has no dst", (t) => {
  t.deepEqual(parsePushSpec("HEAD:refs/heads/main"), { src: "HEAD", dst: "refs/heads/main", forced: false });
  t.deepEqual(parsePushSpec("+HEAD:refs/heads/main"), { src: "HEAD", dst: "refs/heads/main", forced: true });
  t.deepEqual(parsePushSpec(":refs/heads/main"), { src: "", dst: "refs/heads/main", forced: false });
  t.deepEqual(parsePushSpec("refs/heads/main"), { src: "refs/heads/main", dst: "", forced: false });
});

const WORDS = ["capabilities", "option", "list", "import", "push", "stateless-connect"];

/** Text as it may arrive on a line: any characters but the newline that ends it, words git uses mixed in. */
const lineText = fc
  .array(fc.oneof(fc.constantFrom(...WORDS, " ", "for-push", ":", "+"), fc.string({ maxLength: 8 })), {
    maxLength: 6,
  })
  .map((parts) => parts.join("").replaceAll("\n", ""));

test("property: any line is a command named by its first word, or a refusal naming the line; never a throw", (t) => {
  fc.assert(
    fc.property(fc.oneof(lineText, fc.string({ unit: "binary", maxLength: 200 })), (line) => {
      const command = parseHelperCommand(line);
      const first = line.split(" ")[0];
      if (command.name === "unknown") {
        return (
          !WORDS.includes(first ?? "") &&
          command.refusal.includes(JSON.stringify(line.slice(0, 80))) &&
          command.refusal.length <= 200 + JSON.stringify(line.slice(0, 80)).length
        );
      }
      return command.name === first;
    }),
    fuzzParams(500),
  );
  t.pass();
});

test("property: a push line's spec is the rest of the line, and its refspec reads back as written", (t) => {
  const ref = fc.string({ maxLength: 30 }).map((text) => text.replace(/[:\n]/g, ""));
  fc.assert(
    // A refspec's leading `+` is the force flag, so no src git writes starts with one.
    fc.property(
      fc.boolean(),
      ref.map((text) => text.replace(/^\++/, "")),
      ref,
      (forced, src, dst) => {
        const spec = `${forced ? "+" : ""}${src}:${dst}`;
        const command = parseHelperCommand(`push ${spec}`);
        const parsed = parsePushSpec(spec);
        return (
          command.name === "push" &&
          command.spec === spec &&
          parsed.forced === forced &&
          parsed.src === src &&
          parsed.dst === dst
        );
      },
    ),
    fuzzParams(300),
  );
  fc.assert(
    fc.property(fc.string({ unit: "binary", maxLength: 100 }), (spec) => {
      const parsed = parsePushSpec(spec);
      return typeof parsed.src === "string" && typeof parsed.dst === "string" && !parsed.dst.includes(":");
    }),
    fuzzParams(300),
  );
  t.pass();
});

test("property: parseRequest takes the last command=, every want and the last filter, and nothing else", (t) => {
  const argument = fc.oneof(
    fc.constantFrom("command=fetch", "command=ls-refs", "want ", "filter ", "done", "thin-pack", ""),
    fc.string({ maxLength: 20 }),
  );
  fc.assert(
    fc.property(fc.array(fc.tuple(argument, fc.string({ maxLength: 45 })), { maxLength: 12 }), (pairs) => {
      const lines = pairs.map(([head, tail]) => head + tail);
      const request = parseRequest(lines);
      const commands = lines.filter((line) => line.startsWith("command=")).map((line) => line.slice(8));
      const filters = lines.filter((line) => line.startsWith("filter ")).map((line) => line.slice(7).trim());
      const wants = lines.filter((line) => line.startsWith("want ")).map((line) => line.slice(5).trim());
      return (
        request.command === commands.at(-1) &&
        request.filter === filters.at(-1) &&
        JSON.stringify(request.wants) === JSON.stringify(wants)
      );
    }),
    fuzzParams(300),
  );
  t.pass();
});

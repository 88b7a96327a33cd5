/**
 * The pure parts of the mirror's report (cli/mirror/changes.ts): `diff-tree -z` output as folder changes
 * (recorded from git 2.39), the commit message, and what the verification names. The runs against real git
 * and real servers are in e2e/mirror-refresh.test.ts and e2e/mirror-command.test.ts.
 */
import test from "ava";
import { countChanges, describeComparison, mirrorCommitMessage, parseTreeDiff } from "./changes.js";

const OID_A = "a".repeat(40);
const OID_B = "b".repeat(40);

test("parseTreeDiff reads diff-tree -r -z --no-renames; a mode change counts as changed", (t) => {
  const zero = "0".repeat(40);
  const output = Buffer.from(
    [
      `:000000 100644 ${zero} ${OID_A} A`,
      "issues/0004.md",
      `:100644 100644 ${OID_A} ${OID_B} M`,
      "issues/0001.md",
      `:100644 000000 ${OID_B} ${zero} D`,
      "issues/0002.md",
      `:100755 100644 ${OID_A} ${OID_A} T`,
      "issues/0003.md",
      "",
    ].join("\0"),
  );
  const changes = parseTreeDiff(output);
  t.deepEqual(changes, [
    { status: "A", path: "issues/0004.md" },
    { status: "M", path: "issues/0001.md" },
    { status: "D", path: "issues/0002.md" },
    { status: "M", path: "issues/0003.md" },
  ]);
  t.deepEqual(countChanges(changes), { added: 1, changed: 2, removed: 1 });
  t.deepEqual(parseTreeDiff(Buffer.alloc(0)), []);
});

test("the mirror commit message is the same for the same inputs", (t) => {
  const counts = { added: 1, changed: 2, removed: 3 };
  t.is(
    mirrorCommitMessage("wiki", "DOCS", counts, OID_A),
    `svc: mirror wiki project DOCS\n\n1 added, 2 changed, 3 removed\n\nsvc-cache-commit: ${OID_A}\n`,
  );
});

test("describeComparison names every kind of difference and shortens long lists", (t) => {
  t.is(describeComparison({ missing: [], extra: [], different: [] }), "");
  t.is(
    describeComparison({
      missing: ["issues/0002.md"],
      extra: ["issues/9999.md"],
      different: ["issues/0001.md"],
    }),
    "1 with other bytes: issues/0001.md; 1 missing: issues/0002.md; 1 not in the cache: issues/9999.md",
  );
  const many = Array.from({ length: 25 }, (_, i) => `pages/${i}.md`);
  const text = describeComparison({ missing: many, extra: [], different: [] });
  t.true(text.startsWith("25 missing: pages/0.md, pages/1.md,"));
  t.true(text.endsWith("pages/19.md and 5 more"));
});

/** `summaryOfResult` on result commits as commitResult writes them. */
import test from "ava";
import { summaryOfResult } from "./push-result.js";

test("summaryOfResult reads a push's result commit; other commits give undefined", (t) => {
  const head = `tree ${"2".repeat(40)}\nparent ${"1".repeat(40)}\nauthor svc <svc@localhost> 1 +0000\ncommitter svc <svc@localhost> 1 +0000\n\n`;
  t.is(
    summaryOfResult(Buffer.from(`${head}svc: push to sim project demo\n\n2 created, 1 updated, 0 deleted\n`)),
    "2 created, 1 updated, 0 deleted",
  );
  t.is(
    summaryOfResult(
      Buffer.from(`${head}svc: push to forge project acme/widgets\n\n0 created, 1 updated, 2 closed\n`),
    ),
    "0 created, 1 updated, 2 closed",
  );
  t.is(
    summaryOfResult(Buffer.from(`${head}svc: sync forge project acme/widgets\n\n2 changed, 0 removed\n`)),
    undefined,
  );
  t.is(summaryOfResult(Buffer.from(`${head}Fix 2 created, 1 updated, 0 deleted\n`)), undefined);
});

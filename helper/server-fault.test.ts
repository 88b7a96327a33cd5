import test from "ava";
import { SvcError } from "../core/errors.js";
import { BackendUnreachableError } from "../core/http.js";
import { whenAgain } from "./server-fault.js";

test("whenAgain: an unreachable server is 'back'; a fault a backend wrapped in its own words keeps the fault's words", (t) => {
  const url = new URL("http://127.0.0.1:1/x");
  const unreachable = new BackendUnreachableError("GET", url, { code: "ECONNREFUSED" });
  t.is(whenAgain(unreachable), "when the server is back");
  t.is(
    whenAgain(new SvcError("SVC_BACKEND", "created issue TEST-4, then x", { cause: unreachable })),
    "when the server is back",
  );
  t.is(whenAgain(new SvcError("SVC_BACKEND", "x", { data: { status: 502 } })), "when the server works again");
});

import test from "ava";
import { givenSim } from "../../testing/sim.js";
import { parseBind } from "./server.js";

test("parseBind takes host:port and [v6]:port on loopback, and refuses anything else", (t) => {
  t.deepEqual(parseBind("127.0.0.1:7878"), { host: "127.0.0.1", port: 7878 });
  t.deepEqual(parseBind("[::1]:0"), { host: "::1", port: 0 });
  t.deepEqual(parseBind("localhost:0"), { host: "localhost", port: 0 });
  for (const bad of ["0.0.0.0:7878", "10.0.0.1:80", "example.com:80", "127.0.0.1", "127.0.0.1:70000", ""]) {
    t.throws(() => parseBind(bad), { message: /--bind/ }, bad);
  }
});

test("a simulator bound to localhost announces http://localhost:<port>, which the default allowlist accepts", async (t) => {
  const sim = await givenSim(t, { bind: "localhost:0" });
  t.regex(sim.url, /^http:\/\/localhost:\d+$/);
  const response = await fetch(`${sim.url}/healthz`);
  t.is(await response.text(), "ok");
});

import test from "ava";
import { tokenMatches } from "./api.js";
import { ConfigReader, readApiAddress } from "./config.js";

const TOKEN = "kZ3v0pQ-7m2xR9sLw4tYb8nE1cF6hJ5aGdUo2iKqTzA";

test("tokenMatches takes the token and the previous one, nothing shorter, longer or different", (t) => {
  t.true(tokenMatches(TOKEN, [TOKEN]));
  t.true(tokenMatches("previous", [TOKEN, "previous"]));
  for (const offered of ["", TOKEN.slice(0, -1), `${TOKEN}x`, TOKEN.toLowerCase(), ` ${TOKEN}`, "previous"]) {
    t.false(tokenMatches(offered, [TOKEN]), JSON.stringify(offered));
  }
  t.false(tokenMatches(TOKEN, []));
});

test("the pulse API binds loopback on port 7879 unless PULSE_API_HOST and PULSE_API_PORT say otherwise", (t) => {
  t.deepEqual(readApiAddress(new ConfigReader({})), { host: "127.0.0.1", port: 7879 });
  t.deepEqual(readApiAddress(new ConfigReader({ PULSE_API_HOST: "::1", PULSE_API_PORT: "0" })), {
    host: "::1",
    port: 0,
  });
});

/**
 * The one redactor: which forms of a secret each encoding set replaces (the log: the secret only; the
 * listener: also its URL-path encoding; the OAuth provider: also its form encoding), the 4-character floor,
 * longest-first replacement, and, as a property, that no added secret survives in any text.
 */
import test from "ava";
import fc from "fast-check";
import { fuzzParams } from "../../testing/fuzz.js";
import { ALL_SECRET_ENCODINGS, Redactor } from "./redact.js";

const secret = "ab/c d+e=f";
const uriForm = "ab%2Fc%20d%2Be%3Df";
const formForm = "ab%2Fc+d%2Be%3Df";
const text = `raw ${secret} path ${uriForm} body ${formForm}`;

test("the secret alone: encoded forms stay (the log's set)", (t) => {
  t.is(new Redactor([]).add(secret).redact(text), `raw [redacted] path ${uriForm} body ${formForm}`);
});

test("uri-component also replaces the URL-path form (the listener's set)", (t) => {
  t.is(
    new Redactor(["uri-component"]).add(secret).redact(text),
    `raw [redacted] path [redacted] body ${formForm}`,
  );
});

test("all encodings also replace the form-urlencoded form (the OAuth provider's set, the default)", (t) => {
  t.is(
    new Redactor(ALL_SECRET_ENCODINGS).add(secret).redact(text),
    "raw [redacted] path [redacted] body [redacted]",
  );
  t.is(new Redactor().add(secret).redact(text), "raw [redacted] path [redacted] body [redacted]");
});

test("values under 4 characters and undefined are ignored", (t) => {
  t.is(new Redactor().add("abc", undefined, "").redact("abc abcd"), "abc abcd");
  t.is(new Redactor().add("abcd").redact("abc abcd"), "abc [redacted]");
});

test("a secret that contains another is replaced whole, whatever the order they were added in", (t) => {
  t.is(new Redactor([]).add("token", "token-long-secret").redact("x token-long-secret y"), "x [redacted] y");
  t.is(new Redactor([]).add("token-long-secret", "token").redact("x token-long-secret y"), "x [redacted] y");
});

test("secrets added later apply from then on", (t) => {
  const redactor = new Redactor(["uri-component"]).add("first-token");
  t.is(redactor.redact("second-token"), "second-token");
  redactor.add("second-token");
  t.is(redactor.redact("first-token second-token"), "[redacted] [redacted]");
});

// No character of "[redacted]" is in the alphabet, so a replacement can never form a secret again.
const alphabet = fc.constantFrom(..."0123456789XYZ /+=&?%\u00e9");

test("no added secret survives in any form its encodings cover", (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.string({ unit: alphabet, minLength: 4, maxLength: 12 }), { minLength: 1, maxLength: 3 }),
      fc.string({ unit: alphabet, maxLength: 20 }),
      (secrets, filler) => {
        const forms = secrets.flatMap((s) => [
          s,
          encodeURIComponent(s),
          new URLSearchParams({ s }).toString().slice(2),
        ]);
        const out = new Redactor()
          .add(...secrets)
          .redact(forms.map((form) => `${filler}${form}${filler}`).join("\n"));
        return forms.every((form) => !out.includes(form));
      },
    ),
    fuzzParams(100),
  );
  t.pass();
});

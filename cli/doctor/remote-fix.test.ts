/**
 * The remote check's fixes for a URL svc refuses (cli/doctor/remote-fix.ts), where no server needs asking:
 * the URL it must have been, set with git, or advice in words; never a placeholder.
 */
import test from "ava";
import { SvcError } from "../../core/errors.js";
import { parseRemoteUrl } from "../../core/remote-url.js";
import { urlFix } from "./remote-fix.js";

const PLACE = { dir: "d", remote: "origin" };
const ASKING = { env: {}, offline: true };

async function fixOf(url: string) {
  let error: unknown;
  try {
    parseRemoteUrl(url);
  } catch (caught) {
    error = caught;
  }
  if (!(error instanceof SvcError)) throw new Error(`${url} parsed`);
  return urlFix(PLACE, url, error, ASKING);
}

test("a URL svc can correct: set-url to it, with the real values", async (t) => {
  t.is(
    await fixOf("svc::http://agent:s3cret@127.0.0.1:7878/projects/demo"),
    "git -C d remote set-url origin svc::http://127.0.0.1:7878/projects/demo",
  );
  t.is(
    await fixOf("svc::127.0.0.1:7878/projects/demo"),
    "git -C d remote set-url origin svc::http://127.0.0.1:7878/projects/demo",
  );
  t.is(
    await fixOf("svc::http://192.0.2.7:7878/projects/demo"),
    "git -C d remote set-url origin svc::http://127.0.0.1:7878/projects/demo",
  );
  t.is(
    await fixOf("svc::https://alice:pw@acme.atlassian.net/wiki/projects/DOCS"),
    "git -C d remote set-url origin svc::https://acme.atlassian.net/wiki/projects/DOCS",
  );
});

test("a URL svc cannot correct: advice in words, without a placeholder", async (t) => {
  for (const url of [
    "svc::https://api.github.com/forge/projects/acme",
    "svc::ftp://127.0.0.1/projects/demo",
    "svc::http://127.0.0.1:7878/projects/",
  ]) {
    const fix = await fixOf(url);
    t.is(typeof fix, "object", url);
    const advice = typeof fix === "object" ? fix.advice : "";
    t.notRegex(advice, /<[a-z][a-z-]*>/, url);
    t.regex(advice, /svc doctor d|svc init --help/, url);
  }
  t.deepEqual(await fixOf("svc::http://127.0.0.1:7878/projects/"), {
    advice:
      "svc cannot tell which project the URL means: the simulator at http://127.0.0.1:7878 did not say which it serves (--offline sends no request, so svc did not ask it (GET http://127.0.0.1:7878/projects)); set the URL with git -C d remote set-url origin followed by it, then run svc doctor d",
  });
});

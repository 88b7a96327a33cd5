/**
 * What the helper answers before it needs anything of the project (gitremote-helpers(7) "COMMANDS"): the
 * capability list, the options it accepts, and the ref list a push asks for (and the one format of the
 * `SVC_TRACE` line, which bin.cjs writes before main.js is loaded). CommonJS and free of imports,
 * so that `bin.cjs` answers these without loading an ES module: git starts the helper for every fetch and
 * every lazy blob batch, and `capabilities` is always its first question.
 */

/** `refs/svc/<remote>`: where the helper's refspec puts the server's branches (a URL remote gets `svc-url`). */
function privateRefPrefix(remote: string): string {
  return `refs/svc/${/^[A-Za-z0-9._-]+$/.test(remote) ? remote : "svc-url"}`;
}

/** The answer to `capabilities`. */
function capabilitiesAnswer(refPrefix: string): string {
  return `stateless-connect\nimport\npush\nrefspec refs/heads/*:${refPrefix}/*\noption\n\n`;
}

/** The options git may set that the helper accepts (`ok`); any other is answered `unsupported`. */
const SUPPORTED_OPTIONS: ReadonlySet<string> = new Set(["from-promisor", "verbosity", "progress"]);

/**
 * The answer to `list for-push`. The tip is unknown on purpose: with the real id git would lazily fetch it
 * and then refuse, by itself, a user who is behind on other records; staleness is judged per record by the
 * push itself.
 */
const LIST_FOR_PUSH_ANSWER = "? refs/heads/main\n@refs/heads/main HEAD\n\n";

/** `SVC_TRACE`'s line for `message`: the helper's pid and the milliseconds since the process started. */
function traceLine(message: string): string {
  return `svc-trace ${process.pid} +${Math.round(performance.now())}ms ${message}`;
}

export = { privateRefPrefix, capabilitiesAnswer, SUPPORTED_OPTIONS, LIST_FOR_PUSH_ANSWER, traceLine };

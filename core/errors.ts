/**
 * The error hierarchy shared by every part of svc. Each error carries a stable `code` that tests and callers
 * match on, structured `data`, and a message that says what failed, what was expected, what was received and
 * what to run next. `UserFacingError`s are printed without a stack; anything else is a bug and keeps it.
 */

export type ErrorCode =
  | "SVC_RECORD_PARSE"
  | "SVC_RECORD_INVALID"
  | "SVC_USAGE"
  | "SVC_SEED_INVALID"
  | "SVC_STORE"
  | "SVC_LOCAL_FAULT"
  | "SVC_EGRESS_DENIED"
  | "SVC_BACKEND"
  | "SVC_CONFLICT"
  | "SVC_CONFIG"
  | "SVC_LISTEN";

export class SvcError extends Error {
  readonly code: ErrorCode;
  readonly data: Record<string, unknown>;

  constructor(
    code: ErrorCode,
    message: string,
    options: { data?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.data = options.data ?? {};
  }
}

/** The user's input was wrong; the message is the whole story, so it is printed without a stack. */
export class UserFacingError extends SvcError {}

/**
 * What svc prints on stderr for a command that failed with `error`: an `SvcError` (the user's input or the
 * environment was wrong) as `svc: <message>` alone; anything else is a bug in svc, printed as
 * `svc: internal error: <message>`, then its stack (and its causes'), then how to report it. package.json
 * names no issue tracker, so the report goes to the maintainers.
 */
export function failureReport(error: unknown, version: string): string {
  if (error instanceof SvcError) return `svc: ${terminalSafe(error.message)}\n`;
  const message = error instanceof Error ? error.message : String(error);
  return (
    `svc: internal error: ${message}\n${stackOf(error)}\n` +
    `svc: this is a bug in svc ${version}; please report it to the svc maintainers with the lines above ` +
    "and the output of `svc --version`\n"
  );
}

/** The stack of `error` and of each `cause` under it (a few levels: a cycle must not loop). */
function stackOf(error: unknown): string {
  const lines: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== undefined; depth++) {
    const text =
      current instanceof Error ? (current.stack ?? `${current.name}: ${current.message}`) : String(current);
    lines.push(depth === 0 ? text : `caused by: ${text}`);
    current = current instanceof Error ? current.cause : undefined;
  }
  if (!(error instanceof Error)) lines.push(`(no stack: a ${typeof error} was thrown, not an Error)`);
  return lines.join("\n");
}

/**
 * True for the characters that make a terminal do something instead of showing a glyph: C0 and C1 controls
 * (escape sequences start with one), DEL, and the bidirectional overrides and isolates that reorder what is
 * shown (a filename that reads backwards). Line feed and tab are among them; callers decide about those.
 */
export function isControlCharacter(code: number): boolean {
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

/**
 * `text` for stderr: every control character but line feed and tab becomes U+FFFD. Messages quote text
 * from servers and records; a carriage return or an escape sequence in it must not overwrite or recolour
 * what svc prints.
 */
export function terminalSafe(text: string): string {
  let out = "";
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    out += code !== 0x0a && code !== 0x09 && isControlCharacter(code) ? "\ufffd" : char;
  }
  return out;
}

/** Shortens untrusted text before it goes into an error message (never print a whole 5 MB body). */
export function excerpt(text: string, max = 80): string {
  const oneLine = JSON.stringify(text);
  return oneLine.length <= max ? oneLine : `${oneLine.slice(0, max - 1)}…"`;
}

/** Characters a POSIX shell takes literally in an unquoted word. */
const SHELL_SAFE = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * `text` as one word of a POSIX shell command, for the commands messages print (`git add <file>`,
 * `git commit -m <message>`, a sparse-checkout glob, the user's own git command): as it is when nothing in
 * it is special; in double quotes where they read better (prose with spaces or an apostrophe) and nothing
 * in it is special inside them (`"`, `$`, backquote, backslash, `!` for bash's history, newline); else in
 * single quotes, which take everything literally (`'\''` for a quote inside). A glob is single-quoted.
 * Text with control characters is spelled without them (`printfWord`).
 */
export function shellWord(text: string): string {
  if (SHELL_SAFE.test(text)) return text;
  if ([...text].some((char) => isControlCharacter(char.codePointAt(0) ?? 0))) return printfWord(text);
  if (/[\s']/.test(text) && !/["$`\\!\n]/.test(text)) return `"${text}"`;
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * A shell word for text with control characters (a file named with an escape sequence), itself free of
 * them, so it survives `terminalSafe` and a terminal and runs as printed: `"$(printf 'issues/\033[1m.md')"`,
 * each control character (and `!`, which bash's history would expand) as octal escapes of its UTF-8 bytes,
 * `\` and `%` escaped for printf's format, `'` as `'\''`. Not bash's `$'…'`: dash, the `sh` of Debian and
 * Ubuntu, which runs what is pasted into `sh -c`, reads `$'a\tb'` as `$` and the quoted `a\tb` (dash
 * 0.5.12, tried). Command substitution drops trailing newlines, so those follow in single quotes, as they are.
 */
function printfWord(text: string): string {
  const trailing = /\n*$/.exec(text)?.[0] ?? "";
  const escaped: Record<string, string> = { "\\": "\\\\", "%": "%%", "'": "'\\''" };
  let format = "";
  for (const char of text.slice(0, text.length - trailing.length)) {
    if (isControlCharacter(char.codePointAt(0) ?? 0) || char === "!") {
      for (const byte of new TextEncoder().encode(char)) format += `\\${byte.toString(8).padStart(3, "0")}`;
    } else format += escaped[char] ?? char;
  }
  return `"$(printf '${format}')"${trailing === "" ? "" : `'${trailing}'`}`;
}

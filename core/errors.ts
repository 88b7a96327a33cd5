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
  | "SVC_EGRESS_DENIED"
  | "SVC_BACKEND"
  | "SVC_CONFLICT"
  | "SVC_CONFIG";

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

/** Shortens untrusted text before it goes into an error message (never print a whole 5 MB body). */
export function excerpt(text: string, max = 80): string {
  const oneLine = JSON.stringify(text);
  return oneLine.length <= max ? oneLine : `${oneLine.slice(0, max - 1)}…"`;
}

/** Characters a POSIX shell takes literally in an unquoted word. */
const SHELL_SAFE = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * `text` as one word of a POSIX shell command, for the commands messages print (`git add <file>`): as it
 * is when nothing in it is special, in double quotes when only spaces and the like are, else in single
 * quotes (`'\''` for a quote inside).
 */
export function shellWord(text: string): string {
  if (SHELL_SAFE.test(text)) return text;
  if (!/["$`\\!\n]/.test(text)) return `"${text}"`;
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

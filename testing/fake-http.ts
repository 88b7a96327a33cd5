/**
 * One request to a fake vendor service from its own tests, through plain `fetch`: the service's default
 * credentials and headers unless the test says otherwise, the whole answer read as text.
 */
import { DELIBERATE_HEADER } from "./vendor-contract.js";

export interface FakeResponse {
  readonly status: number;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly text: string;
  json<T>(): T;
}

export interface FakeCallOptions {
  /** `Authorization` value; the service's default unless given (`null` sends none). */
  readonly authorization?: string | null;
  readonly json?: unknown;
  /** A raw request body, sent as is. */
  readonly raw?: string;
  readonly headers?: Record<string, string>;
  /**
   * Why this request departs from the vendor's description on purpose (to see the fake refuse it): the
   * fake keeps it aside instead of judging it (testing/vendor-contract.ts).
   */
  readonly deliberate?: string;
}

/** What every request to one service carries unless a test overrides it. */
export interface FakeDefaults {
  readonly authorization: string;
  readonly headers: Record<string, string>;
  /** Default `manual`: a test sees a redirect as the client would before following it. */
  readonly redirect?: "manual" | "follow";
}

/** `method target` on the service at `base`; `target` is a path or an absolute URL (as Link headers give them). */
export async function callFake(
  base: string,
  method: string,
  target: string,
  defaults: FakeDefaults,
  options: FakeCallOptions = {},
): Promise<FakeResponse> {
  const headers: Record<string, string> = { ...defaults.headers, ...options.headers };
  const authorization = options.authorization === undefined ? defaults.authorization : options.authorization;
  if (authorization !== null) headers.authorization = authorization;
  const body = options.json === undefined ? options.raw : JSON.stringify(options.json);
  if (body !== undefined) headers["content-type"] = "application/json";
  if (options.deliberate !== undefined) headers[DELIBERATE_HEADER] = options.deliberate;
  const response = await fetch(new URL(target, base), {
    method,
    headers,
    body,
    redirect: defaults.redirect ?? "manual",
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    text,
    json<T>() {
      return JSON.parse(text) as T;
    },
  };
}

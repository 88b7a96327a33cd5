/**
 * The fake forge's own tests' requests: one through plain `fetch` with the fake's token and GitHub's headers,
 * and the relations of a `Link` header.
 */
import type { FakeCallOptions, FakeResponse } from "../fake-http.js";
import { callFake } from "../fake-http.js";
import type { FakeForge } from "./types.js";

/** One request with the fake's token and GitHub's headers unless given; `target` is a path or an absolute URL. */
export function callForge(
  forge: FakeForge,
  method: string,
  target: string,
  options: FakeCallOptions = {},
): Promise<FakeResponse> {
  return callFake(
    forge.url,
    method,
    target,
    {
      authorization: `Bearer ${forge.token}`,
      headers: { accept: "application/vnd.github+json", "x-github-api-version": "2022-11-28" },
    },
    options,
  );
}

/** `Link` header → rel → URL. */
export function linkRelations(header: string | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  for (const part of (header ?? "").split(",")) {
    const match = /<([^>]+)>;\s*rel="([^"]+)"/.exec(part);
    if (match) result[match[2] as string] = match[1] as string;
  }
  return result;
}

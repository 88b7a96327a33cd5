/**
 * Readers of what git prints about another repository: `git ls-remote` (its refs) and `git push --porcelain`
 * (what became of each ref pushed). Pure functions of git's output; git writes both untranslated, whatever
 * the locale. The mirror (cli/mirror/) is their user.
 */

/**
 * Reads `git ls-remote <url> [<patterns>]` output (`<oid> TAB <refname>` a line): refname → oid. Lines whose
 * id is not 40 hexadecimal digits (a SHA-256 repository) are left out, so such a ref reads as absent.
 */
export function parseLsRemote(stdout: string): Map<string, string> {
  const refs = new Map<string, string>();
  for (const line of stdout.split("\n")) {
    const [oid, name] = line.split("\t");
    if (name !== undefined && oid && /^[0-9a-f]{40}$/.test(oid)) refs.set(name, oid);
  }
  return refs;
}

export type PushOutcome =
  | { readonly kind: "pushed" }
  /** git's own fast-forward check failed: the branch is not where it was read. */
  | { readonly kind: "moved"; readonly reason: string }
  | { readonly kind: "refused"; readonly reason: string };

/**
 * What `git push --porcelain` printed on stdout for `ref`: a line `<flag> TAB <src>:<dst> TAB <summary>`,
 * the flag `!` for a refused ref, the reason in parentheses (`[rejected] (fetch first)`,
 * `[remote rejected] (pre-receive hook declined)`). No line for the ref (the push failed before it got that
 * far) is a refusal with no reason.
 */
export function parsePushPorcelain(stdout: string, ref: string): PushOutcome {
  for (const line of stdout.split("\n")) {
    const [flag, refs, summary = ""] = line.split("\t");
    if (refs === undefined || !refs.endsWith(`:${ref}`)) continue;
    if (flag !== "!") return { kind: "pushed" };
    const reason = /\(([^)]*)\)\s*$/.exec(summary)?.[1] ?? summary;
    return /non-fast-forward|fetch first|stale info/.test(reason)
      ? { kind: "moved", reason }
      : { kind: "refused", reason: summary };
  }
  return { kind: "refused", reason: "" };
}

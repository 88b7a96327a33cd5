/**
 * The `Link` response header of RFC 8288 as the forge sends it for pagination:
 * `<https://api.github.com/repositories/1/issues?page=2>; rel="next", <…>; rel="last"`. Only what a
 * listing needs: the target of one relation. A header that cannot be read gives no next page, never a
 * guess; the caller checks the URL (origin allowlist, repetition) before following it.
 */

/** The target of the first link whose `rel` names `relation`, or undefined. At most 64 KiB are read. */
export function linkTarget(header: string | undefined, relation: string): string | undefined {
  if (header === undefined) return undefined;
  const text = header.length > 65_536 ? header.slice(0, 65_536) : header;
  // Each link is `<target>` and the parameters up to the next `<` (a quoted `<` inside one is not expected).
  for (const match of text.matchAll(/<([^>]*)>([^<]*)/g)) {
    const params = match[2] ?? "";
    for (const param of params.split(";")) {
      const rel = /^\s*rel\s*=\s*(?:"([^"]*)"|([^\s",]+))\s*,?\s*$/i.exec(param);
      if (!rel) continue;
      const names = (rel[1] ?? rel[2] ?? "").toLowerCase().split(/\s+/);
      if (names.includes(relation)) return match[1];
    }
  }
  return undefined;
}

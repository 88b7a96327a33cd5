/**
 * The swarm agents' scripted resolution of a record file that `git pull` left with conflict markers (the
 * `merge` style, or `diff3` with its `|||||||` base section, which is dropped):
 * - a hunk in the frontmatter gets the server's side ("theirs"): two sides' lines of one field cannot both
 *   stay (a duplicate key), and the server's `version` and `updated_at` lines are its own;
 * - a hunk in the body keeps both sides: our lines, then each of theirs that ours lack. The agents only
 *   append lines, so the union is every line either side added.
 * Pure; the agent writes the result and runs `git add`.
 */

/** Why a file could not be resolved: markers that do not pair up. */
export class UnresolvableConflict extends Error {}

const MARKER = { ours: "<<<<<<<", base: "|||||||", split: "=======", theirs: ">>>>>>>" } as const;

function isMarker(line: string, marker: string): boolean {
  return line === marker || line.startsWith(`${marker} `);
}

/** `text` with every conflict hunk resolved as the module comment says. */
export function resolveRecordConflicts(text: string): string {
  const lines = text.split("\n");
  const out: string[] = [];
  // Delimiter lines (`---`) seen outside hunks: the frontmatter is between the first and the second.
  let delimiters = 0;
  let section: "none" | "ours" | "base" | "theirs" = "none";
  let ours: string[] = [];
  let theirs: string[] = [];
  for (const [index, line] of lines.entries()) {
    if (section === "none") {
      if (isMarker(line, MARKER.ours)) {
        section = "ours";
        ours = [];
        theirs = [];
        continue;
      }
      if (isMarker(line, MARKER.base) || isMarker(line, MARKER.split) || isMarker(line, MARKER.theirs)) {
        throw new UnresolvableConflict(`line ${index + 1}: ${line.slice(0, 7)} outside a conflict hunk`);
      }
      if (line === "---") delimiters++;
      out.push(line);
      continue;
    }
    if (isMarker(line, MARKER.ours)) throw new UnresolvableConflict(`line ${index + 1}: nested hunk`);
    if (section === "ours" && isMarker(line, MARKER.base)) {
      section = "base";
    } else if (section !== "theirs" && isMarker(line, MARKER.split)) {
      section = "theirs";
    } else if (section === "theirs" && isMarker(line, MARKER.theirs)) {
      section = "none";
      const inFrontmatter = delimiters === 1;
      out.push(...(inFrontmatter ? theirs : union(ours, theirs)));
    } else if (section === "ours") {
      ours.push(line);
    } else if (section === "theirs") {
      theirs.push(line);
    }
  }
  if (section !== "none") throw new UnresolvableConflict("a conflict hunk is not closed");
  return out.join("\n");
}

function union(ours: readonly string[], theirs: readonly string[]): string[] {
  const seen = new Set(ours);
  return [...ours, ...theirs.filter((line) => !seen.has(line))];
}

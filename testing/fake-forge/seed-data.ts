/**
 * The fake forge's seed data: titles, bodies, labels and assignees picked by an issue's ordinal, tricky for YAML
 * frontmatter, Markdown, line endings and Unicode.
 */

export const SEED_TITLES: readonly ((n: number) => string)[] = [
  (n) => `Issue ${n}: a plain title`,
  (n) => `Fix "quoted" value: colon ${n}`,
  (n) => `Ünïcödé 日本語 ${n} — émoji 🚀`,
  (n) => `--- ${n} looks like a fence`,
  (n) => `key: value # ${n}`,
  (n) => `'single' & <angle> [brackets] ${n}`,
];

/** Bodies that break naive handling: null, empty, CRLF, `---` lines, YAML-looking text, emoji, trailing spaces. */
export const SEED_BODIES: readonly ((n: number) => string | null)[] = [
  (n) => `Plain body of issue ${n}.`,
  () => null,
  (n) => `Windows line endings ${n}\r\nsecond line\r\n`,
  (n) => `---\ntitle: not the real title\nstate: closed\nnumber: ${n}\n---\nBody after a front-matter block.`,
  () => "",
  (n) => `Emoji 🎉🧪 and a ZWJ sequence 👩‍💻 (${n})\n\nNon-BMP: 𝔘𝔫𝔦𝔠𝔬𝔡𝔢, e\u0301, zero\u200bwidth`,
  (n) => `Above a rule ${n}\n\n---\n\nbelow it, with trailing spaces   \n\n`,
  (n) => `\`\`\`yaml\nid: ${n}\nlist: [1, 2]\nquote: "a: b"\n\`\`\`\n`,
];

export const SEED_ASSIGNEES: readonly (readonly string[])[] = [[], ["alice"], ["bob", "carol"]];

export const SEED_LABELS: readonly (readonly string[])[] = [
  [],
  ["bug"],
  ["enhancement"],
  ["documentation", "good first issue"],
  ["bug", "help wanted"],
];

/** Comment bodies, as tricky as the issues' (CRLF, `---` lines, YAML-looking text, emoji, trailing newlines). */
export const SEED_COMMENTS: readonly ((n: number) => string)[] = [
  (n) => `I can reproduce this (comment ${n}).`,
  (n) => `---\nauthor: not the real author\nid: ${n}\n---\nA comment after a front-matter block.`,
  (n) => `Windows line endings ${n}\r\nsecond line\r\n`,
  (n) => `On it 🚀 — 日本語 ${n}\n\n- [ ] step one\n- [x] step two\n`,
  (n) => `> quoted reply ${n}\n\nDeployed to staging; \`key: value\` looks fine.   \n\n`,
];

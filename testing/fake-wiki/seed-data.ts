/**
 * The fake wiki's seed data: storage-format bodies and titles that break naive handling (CDATA holding a
 * frontmatter block, entities, non-ASCII text, `---` lines, CRLF, trailing blank lines, the empty body).
 */

/**
 * Storage-format bodies that break naive handling: a code macro whose CDATA holds a YAML frontmatter block and
 * a split `]]>`, entities, non-ASCII text, a body that starts with a `---` line, CRLF, trailing blank lines,
 * and the empty body.
 */
export const TRICKY_BODIES: readonly ((n: number) => string)[] = [
  (n) => `<p>Page ${n}: a plain paragraph.</p>`,
  (n) =>
    `<h1>Code ${n}</h1><ac:structured-macro ac:name="code" ac:schema-version="1" ac:macro-id="c0de${n}">` +
    `<ac:parameter ac:name="language">yaml</ac:parameter><ac:plain-text-body><![CDATA[---\nid: ${n}\n` +
    `version: 99\n---\nif (a < b && c > d) { return "]]]]><![CDATA[>"; }\n]]></ac:plain-text-body>` +
    `</ac:structured-macro>`,
  (n) =>
    `<p>Entities ${n}: &amp; &lt;tag&gt; &quot;quoted&quot; &#39;single&#39; &nbsp;&mdash;&#8212;&#x1F600;</p>`,
  (n) => `<p>Unicode ${n}: naïve café — 日本語のテキスト — עברית — 🧪🚀 — e\u0301 — zero\u200bwidth</p>`,
  (n) => `---\n<p>Page ${n} starts with a YAML fence line.</p>\n---\n<p>and has a second one.</p>`,
  (n) =>
    `<ac:structured-macro ac:name="info" ac:schema-version="1"><ac:rich-text-body><p>Info ${n} with ` +
    `<ac:link><ri:page ri:content-title="Tom &amp; Jerry" /></ac:link></p></ac:rich-text-body>` +
    `</ac:structured-macro><table><tbody><tr><th>k</th><td>${n}</td></tr></tbody></table>`,
  (n) => `<p>Windows line ending ${n}</p>\r\n<p>second line</p>`,
  (n) => `<p>Trailing whitespace ${n}   </p>\n\n\n`,
  () => "",
];

export const TRICKY_TITLES: readonly ((n: string) => string)[] = [
  (n) => `Page ${n}`,
  (n) => `Design / "Notes" #${n}`,
  (n) => `Übersicht ${n} — 日本語`,
  (n) => `---: ${n}`,
];

/**
 * Secret redaction, the one implementation: the pulse log, the messenger listener and the OAuth provider
 * each hold a `Redactor` and pass every text meant for people through it.
 *
 * Contract: every known secret of at least 4 characters, and each encoded form the redactor was built with,
 * is replaced by `[redacted]` wherever it occurs. Shorter values are ignored (a 1-character "secret" would
 * shred every line). Forms are replaced longest first, so a secret that contains another is replaced whole
 * instead of leaving its remainder behind. Secrets may be added later (a rotated token) and apply from then.
 */

/**
 * How a secret may be re-encoded on its way into a text: `uri-component` is `encodeURIComponent` (a token
 * in a URL path, as in the bot API's `/bot<token>/`), `form` is `application/x-www-form-urlencoded` (a
 * token in a request body an OAuth server echoes back; a space becomes `+`).
 */
export type SecretEncoding = "uri-component" | "form";

export const ALL_SECRET_ENCODINGS: readonly SecretEncoding[] = ["uri-component", "form"];

const MIN_SECRET_LENGTH = 4;

function encode(secret: string, encoding: SecretEncoding): string {
  return encoding === "uri-component"
    ? encodeURIComponent(secret)
    : new URLSearchParams({ s: secret }).toString().slice("s=".length);
}

export class Redactor {
  private readonly forms = new Set<string>();

  /** `encodings`: the encoded forms redacted besides the secret itself (all of them unless given). */
  constructor(private readonly encodings: readonly SecretEncoding[] = ALL_SECRET_ENCODINGS) {}

  add(...secrets: readonly (string | undefined)[]): this {
    for (const secret of secrets) {
      if (typeof secret !== "string" || secret.length < MIN_SECRET_LENGTH) continue;
      this.forms.add(secret);
      for (const encoding of this.encodings) this.forms.add(encode(secret, encoding));
    }
    return this;
  }

  redact(text: string): string {
    let out = text;
    for (const form of [...this.forms].sort((a, b) => b.length - a.length))
      out = out.split(form).join("[redacted]");
    return out;
  }
}

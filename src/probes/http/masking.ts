// Evidence must never carry a usable secret: credentials the run used, and secret-looking values a probe
// found, are masked everywhere an exchange is written. Enough is kept to show what was there.

const SENSITIVE_HEADER =
  /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key|api-key|x-auth-token|x-csrf-token)$|token|secret|api[-_]?key|session/i;
const SENSITIVE_KEY =
  /pass(word|wd)?$|^pwd$|secret|token|api[-_]?key|apikey|access[-_]?key|private[-_]?key|credential|session[-_]?id|^sid$|hash|csrf|xsrf/i;

/** Shapes that are secrets wherever they appear. */
export const SECRET_VALUE_PATTERNS: ReadonlyArray<{ name: string; pattern: RegExp }> = [
  { name: "bcrypt hash", pattern: /\$2[abxy]?\$\d{2}\$[./A-Za-z0-9]{53}/g },
  { name: "argon2 hash", pattern: /\$argon2(?:id|i|d)\$[^\s"',]+/g },
  { name: "scrypt hash", pattern: /\$(?:scrypt|s0|7)\$[^\s"',]{16,}/g },
  { name: "sha-crypt hash", pattern: /\$[56]\$[^\s"',$]{1,20}\$[./A-Za-z0-9]{43,86}/g },
  { name: "pbkdf2 hash", pattern: /pbkdf2[_:-]sha\d+[$:]\d+[$:][^\s"',]+/gi },
  {
    name: "private key",
    pattern: /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----[\s\S]*?(?:-----END (?:[A-Z]+ )?PRIVATE KEY-----|$)/g,
  },
  { name: "AWS access key", pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
  { name: "JSON web token", pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  { name: "GitHub token", pattern: /\bgh[pousr]_[A-Za-z0-9]{30,}\b/g },
  { name: "Slack token", pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}\b/g },
  { name: "Stripe key", pattern: /\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}\b/g },
];

export function maskValue(value: string): string {
  if (value.length <= 4) return "***";
  const keep = Math.min(6, Math.floor(value.length / 4));
  return `${value.slice(0, keep)}…[masked ${value.length - keep} chars]`;
}

export class Masker {
  private readonly known = new Set<string>();
  private readonly publicNames = new Set<string>();

  /**
   * Registers a value that must never appear in evidence (a token or password the run used). A value that
   * is part of a name everyone may read (a password equal to its username) is not masked as text: masking
   * it would rewrite that name in every request, test and report, so a generated test would sign in as
   * nobody. It is still masked wherever it travels under a sensitive field name.
   */
  addSecret(value: string | undefined): void {
    if (!value || value.length < 4) return;
    for (const name of this.publicNames) if (name.includes(value)) return;
    this.known.add(value);
  }

  /** A password the run signs in with: short ones would mask common words everywhere, so only their field hides them. */
  addPassword(value: string | undefined): void {
    if (value && value.length >= 8) this.addSecret(value);
  }

  /** Registers a name that evidence must keep readable: a profile user's name, username or email. */
  addPublicName(value: string | undefined): void {
    if (!value) return;
    this.publicNames.add(value);
    for (const secret of this.known) if (value.includes(secret)) this.known.delete(secret);
  }

  maskText(text: string): string {
    let result = text;
    for (const secret of [...this.known].sort((a, b) => b.length - a.length)) {
      result = result.split(secret).join(maskValue(secret));
    }
    for (const { pattern } of SECRET_VALUE_PATTERNS) {
      result = result.replace(pattern, (match) => maskValue(match));
    }
    return result;
  }

  maskHeaders(headers: Record<string, string>): Record<string, string> {
    const masked: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) {
      masked[name] = SENSITIVE_HEADER.test(name) ? maskHeaderValue(value) : this.maskText(value);
    }
    return masked;
  }

  /** Masks a JSON value: sensitive keys by name, then every string by the text rules. */
  maskJson(value: unknown): unknown {
    if (typeof value === "string") return this.maskText(value);
    if (Array.isArray(value)) return value.map((item) => this.maskJson(item));
    if (value && typeof value === "object") {
      const masked: Record<string, unknown> = {};
      for (const [key, inner] of Object.entries(value)) {
        masked[key] =
          SENSITIVE_KEY.test(key) && typeof inner === "string" && inner.length > 0
            ? maskValue(inner)
            : this.maskJson(inner);
      }
      return masked;
    }
    return value;
  }

  /** Masks a body that may be JSON, urlencoded, multipart or anything else. */
  maskBody(body: string, compact = false): string {
    const trimmed = body.trim();
    if (/^--\S+\r?\nContent-Disposition: form-data;/i.test(trimmed)) return this.maskMultipart(body);
    if (/^[[{]/.test(trimmed)) {
      try {
        return JSON.stringify(this.maskJson(JSON.parse(trimmed)), null, compact ? undefined : 2);
      } catch {
        // not JSON after all: fall through to the text rules
      }
    }
    if (/^[\w.%-]+=[^&]*(&[\w.%-]+=[^&]*)*$/.test(trimmed)) return this.maskQuery(trimmed);
    return this.maskText(body);
  }

  maskUrl(url: string): string {
    const index = url.indexOf("?");
    if (index < 0) return this.maskText(url);
    return `${this.maskText(url.slice(0, index))}?${this.maskQuery(url.slice(index + 1))}`;
  }

  /** Multipart parts whose name is sensitive lose their value; every other part gets the text rules. */
  private maskMultipart(body: string): string {
    const masked = body.replace(
      /(Content-Disposition: form-data; name="([^"]*)"[^\r\n]*\r?\n(?:[^\r\n]+\r?\n)*\r?\n)([^\r\n]*)/gi,
      (whole, head: string, name: string, value: string) =>
        isSensitiveKey(name) && value ? `${head}${maskValue(value)}` : whole,
    );
    return this.maskText(masked);
  }

  private maskQuery(query: string): string {
    return query
      .split("&")
      .map((pair) => {
        const [key = "", value = ""] = pair.split("=");
        let decoded = value;
        try {
          decoded = decodeURIComponent(value.replace(/\+/g, " "));
        } catch {
          // keep it as sent
        }
        return isSensitiveKey(key) && value
          ? `${key}=${encodeURIComponent(maskValue(decoded))}`
          : this.maskText(pair);
      })
      .join("&");
  }
}

/** A field name is sensitive by its innermost part: `user[password]` and `user%5Bpassword%5D` are passwords. */
function isSensitiveKey(key: string): boolean {
  let decoded = key;
  try {
    decoded = decodeURIComponent(key.replace(/\+/g, " "));
  } catch {
    // keep it as sent
  }
  const inner = decoded.match(/\[([^\]]*)\]$/)?.[1] ?? decoded;
  return SENSITIVE_KEY.test(inner) || SENSITIVE_KEY.test(decoded);
}

function maskHeaderValue(value: string): string {
  const scheme = value.match(/^(Bearer|Basic|Token|Digest)\s+/i);
  if (scheme) return `${scheme[0]}${maskValue(value.slice(scheme[0].length))}`;
  // Cookies: keep the names, mask the values.
  if (value.includes("=")) {
    return value
      .split(/;\s*/)
      .map((part) => {
        const index = part.indexOf("=");
        if (index < 0) return part;
        const name = part.slice(0, index);
        if (/^(path|domain|expires|max-age|samesite)$/i.test(name)) return part;
        return `${name}=${maskValue(part.slice(index + 1))}`;
      })
      .join("; ");
  }
  return maskValue(value);
}

import type { HttpExchange } from "../http/http-types.ts";

// Where a marker can hide in an answer: the raw body, the strings of a JSON body (escaped on the wire), and
// the text of an HTML body once its character references are decoded. Probes look in all three.

const NAMED: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" };

/** HTML character references decoded (`&lt;` `&#60;` `&#x3c;`), as a browser shows the text. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, entity: string) => {
    if (entity[0] === "#") {
      const code =
        entity[1] === "x" || entity[1] === "X"
          ? Number.parseInt(entity.slice(2), 16)
          : Number.parseInt(entity.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code < 0x110000 ? String.fromCodePoint(code) : whole;
    }
    return NAMED[entity.toLowerCase()] ?? whole;
  });
}

function jsonStrings(value: unknown, into: string[]): void {
  if (typeof value === "string") into.push(value);
  else if (Array.isArray(value)) for (const item of value) jsonStrings(item, into);
  else if (value && typeof value === "object")
    for (const [key, inner] of Object.entries(value)) {
      into.push(key);
      jsonStrings(inner, into);
    }
  else if (typeof value === "number") into.push(String(value));
}

/** Every form of the answer's text a marker could appear in. */
export function answerTexts(exchange: HttpExchange | undefined): string[] {
  const response = exchange?.response;
  if (!response) return [];
  const texts = [response.body];
  if (response.json !== undefined) {
    const strings: string[] = [];
    jsonStrings(response.json, strings);
    texts.push(strings.join("\n"));
  }
  if (response.body.includes("&")) texts.push(decodeEntities(response.body));
  return texts;
}

/** Whether the answer shows `text` in any of its forms. */
export function answerShows(exchange: HttpExchange | undefined, text: string): boolean {
  return text.length > 0 && answerTexts(exchange).some((form) => form.includes(text));
}

/** Whether every one of `texts` shows in the answer (each may sit in a different form). */
export function answerShowsAll(exchange: HttpExchange | undefined, texts: readonly string[]): boolean {
  return texts.every((text) => answerShows(exchange, text));
}

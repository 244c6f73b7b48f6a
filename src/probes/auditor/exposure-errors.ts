import { SQL_ERROR } from "./sql-signatures.ts";

// What an error answer gives away: a stack trace or traceback (Node, Python, Java, .NET, PHP, Ruby, Go), a
// framework's debug page (Werkzeug and Starlette debuggers, Django's technical 500, Rails, Laravel, Symfony,
// ASP.NET and ASP.NET Core), the SQL the server ran or the database's own error. Each needs the structure
// of the real thing (a frame with a file and a line, the page's own banner), never a single word, so an
// error message that merely mentions "error" or "SQL" is no disclosure.

export type DisclosureKind = "stack-trace" | "debug-page" | "sql-text";

export interface Disclosure {
  kind: DisclosureKind;
  /** `Python traceback`, `Werkzeug debugger`, `SQL statement`. */
  what: string;
  /** The matched excerpt (at most 200 characters). */
  value: string;
  /** A regular expression source the generated test asserts the answer no longer matches. */
  pattern: string;
}

interface Signature {
  kind: DisclosureKind;
  what: string;
  pattern: RegExp;
  /** Matches needed for the signature to count (frames of a trace, not one line that looks like one). */
  times?: number;
}

const SIGNATURES: readonly Signature[] = [
  {
    kind: "debug-page",
    what: "Werkzeug debugger",
    pattern: /Werkzeug Debugger|The debugger caught an exception in your WSGI application|__debugger__=yes/,
  },
  {
    kind: "debug-page",
    what: "Django debug page",
    pattern: /You(?:'|&#x27;|&#39;)re seeing this error because you have <code>DEBUG = True<\/code>/,
  },
  {
    kind: "debug-page",
    what: "Rails exception page",
    pattern: /Action Controller: Exception caught|<h1>Routing Error<\/h1>[\s\S]*Rails\.root/,
  },
  {
    kind: "debug-page",
    what: "Laravel error page",
    pattern: /Whoops! There was an error|Illuminate\\[A-Z]\w+\\|ignition-/,
  },
  {
    kind: "debug-page",
    what: "ASP.NET error page",
    pattern: /Server Error in '[^']*' Application[\s\S]*Stack Trace:/,
  },
  {
    kind: "debug-page",
    what: "Starlette debugger",
    pattern:
      /<title>Starlette Debugger<\/title>|class="traceback-title">Traceback<\/p>[\s\S]{0,2000}?class="frame-filename"/,
  },
  {
    kind: "debug-page",
    what: "ASP.NET Core developer page",
    pattern:
      /An unhandled exception occurred while processing the request\.[\s\S]{0,20000}?class="stackerror"/,
  },
  {
    kind: "debug-page",
    what: "Symfony exception page",
    pattern: /Symfony\\Component\\[A-Z]\w+\\/,
  },
  {
    kind: "debug-page",
    what: "Spring error page with trace",
    pattern: /Whitelabel Error Page[\s\S]*\bat [\w$.]+\([\w$]+\.java:\d+\)/,
  },
  {
    kind: "stack-trace",
    what: "Python traceback",
    pattern: /Traceback \(most recent call last\):?[\s\S]{0,4000}?File "[^"]+", line \d+/,
  },
  { kind: "stack-trace", what: "Python traceback", pattern: /File "[^"]+\.py", line \d+, in \w+/g, times: 2 },
  {
    kind: "stack-trace",
    what: "Node.js stack trace",
    pattern: /\bat (?:async )?(?:[\w$.<>[\]]+ )?\(?(?:\/|[A-Za-z]:\\|file:\/\/|node:)[^\s()]+:\d+:\d+\)?/g,
    times: 2,
  },
  {
    kind: "stack-trace",
    what: "Node.js stack trace",
    pattern:
      /\b[A-Z]\w*(?:Error|Exception)\b[^\n]*\n\s+at (?:async )?(?:[\w$.<>[\]]+ )?\(?(?:\/|[A-Za-z]:\\|file:\/\/|node:)[^\s()]+:\d+:\d+/,
  },
  {
    kind: "stack-trace",
    what: "Java stack trace",
    pattern: /\bat [\w$.]+\((?:[\w$]+\.java:\d+|Native Method|Unknown Source)\)/g,
    times: 2,
  },
  {
    kind: "stack-trace",
    what: ".NET stack trace",
    pattern: /\bat [\w.`<>[\],]+\([^)]*\) in [^\n]+:line \d+/,
  },
  {
    kind: "stack-trace",
    what: "PHP error",
    pattern:
      /(?:Fatal error|Warning|Parse error|Notice|Uncaught \w+)(?:<\/b>)?:[\s\S]{1,300}? in (?:<b>)?(?:\/|[A-Za-z]:\\)[^\s<]+(?:<\/b>)? on line (?:<b>)?\d+|Stack trace:\s*\n?#0 (?:\/|[A-Za-z]:\\)[^\s(]+\(\d+\)/,
  },
  { kind: "stack-trace", what: "Ruby backtrace", pattern: /[\w/.-]+\.rb:\d+:in [`'][^'`]+'/g, times: 2 },
  { kind: "stack-trace", what: "Go panic", pattern: /goroutine \d+ \[running\]:[\s\S]{0,2000}?\.go:\d+/ },
  {
    kind: "sql-text",
    what: "SQL statement",
    pattern:
      /\b(?:SELECT\s+(?:\*|[\w"`.]+(?:\s*,\s*[\w"`.]+)*)\s+FROM\s+[\w"`.]+|INSERT\s+INTO\s+[\w"`.]+\s*\(|UPDATE\s+[\w"`.]+\s+SET\s+[\w"`.]+\s*=|DELETE\s+FROM\s+[\w"`.]+\s+WHERE)/i,
  },
];

const ENTITIES: Record<string, string> = {
  "&nbsp;": " ",
  "&lt;": "<",
  "&gt;": ">",
  "&quot;": '"',
  "&amp;": "&",
};

/**
 * Error pages escape their traces (`&nbsp;&nbsp;at fn (&lt;anonymous&gt;)`, Jinja's `File &#34;app.py&#34;`);
 * read them as text.
 */
export function unescapeHtml(text: string): string {
  return decodeCharacterReferences(text)
    .replace(/&(?:nbsp|lt|gt|quot|amp);/g, (entity) => ENTITIES[entity] ?? entity)
    .replace(/<br\s*\/?>/gi, "\n");
}

/** Numeric character references decoded: template engines escape quotes as `&#34;` or `&#x22;`. */
export function decodeCharacterReferences(body: string): string {
  return body.replace(/&#(x[0-9a-f]{1,6}|\d{1,7});/gi, (whole, code: string) => {
    const point = code[0] === "x" || code[0] === "X" ? Number.parseInt(code.slice(1), 16) : Number(code);
    return point > 0 && point <= 0x10ffff ? String.fromCodePoint(point) : whole;
  });
}

/** The text of an answer as a reader sees it: a JSON body's strings with their newlines, else the body. */
export function readableText(body: string, json: unknown): string {
  if (json === undefined) return body;
  const strings: string[] = [];
  const collect = (value: unknown, depth: number): void => {
    if (depth > 12 || strings.length > 2000) return;
    if (typeof value === "string") strings.push(value);
    else if (Array.isArray(value)) for (const item of value) collect(item, depth + 1);
    else if (value && typeof value === "object")
      for (const [key, item] of Object.entries(value)) {
        strings.push(key);
        collect(item, depth + 1);
      }
  };
  collect(json, 0);
  return strings.join("\n");
}

/** What a body discloses, one entry per kind (the first signature of that kind that matches). */
export function disclosuresIn(body: string, json?: unknown): Disclosure[] {
  const whole = readableText(body, json);
  const text = whole.length > 200_000 ? whole.slice(0, 200_000) : whole;
  const readable = /&(?:nbsp|lt|gt|quot|#x?[0-9a-f]+);|<br/i.test(text)
    ? `${text}\n${unescapeHtml(text)}`
    : text;
  const found: Disclosure[] = [];
  for (const signature of SIGNATURES) {
    if (found.some((known) => known.kind === signature.kind)) continue;
    const match = matchTimes(readable, signature);
    if (match)
      found.push({
        kind: signature.kind,
        what: signature.what,
        value: match.trim().slice(0, 200),
        pattern: signature.pattern.source,
      });
  }
  const database = readable.match(SQL_ERROR);
  if (database && !found.some((known) => known.kind === "sql-text"))
    found.push({
      kind: "sql-text",
      what: "database error message",
      value: database[0],
      pattern: SQL_ERROR.source,
    });
  return found;
}

function matchTimes(text: string, signature: Signature): string | undefined {
  if (!signature.times) return text.match(signature.pattern)?.[0];
  const matches = [...text.matchAll(new RegExp(signature.pattern.source, "g"))];
  return matches.length >= signature.times ? matches[0]![0] : undefined;
}

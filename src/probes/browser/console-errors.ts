import type { PageLog } from "./browser-session.ts";

// Console errors a person would see in the developer tools: messages logged at `error` level and
// exceptions nothing caught. "Failed to load resource" lines are left out: they repeat a failed request,
// which the link and background-request checks judge on their own terms, and so are the browser's refusals
// to run a script or apply a style whose request failed (the 404 page is not JavaScript). Two errors that differ only in
// numbers, ids or a URL's query string are one error (one signature).

export interface ConsoleError {
  kind: "console" | "exception";
  text: string;
  location?: string;
  signature: string;
}

const RESOURCE_NOISE = /^Failed to load resource\b/i;
/** "Refused to execute script from 'URL' because its MIME type …", and the same for styles. */
const REFUSED_RESOURCE = /^Refused to (?:execute|apply|load)\b[^']*'([^']+)'/i;

/** `Cannot read properties of undefined (reading 'x')` at any id, any query: one signature. */
export function errorSignature(text: string): string {
  return text
    .split("\n")[0]
    ?.replace(/(https?:\/\/[^\s?#'")]+)\?[^\s#'")]*/g, "$1")
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, "{uuid}")
    .replace(/\b[0-9a-f]{16,}\b/gi, "{hex}")
    .replace(/\d+/g, "{n}")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 200) as string;
}

export function consoleErrorsOf(log: PageLog): ConsoleError[] {
  const errors: ConsoleError[] = [];
  const seen = new Set<string>();
  const add = (error: Omit<ConsoleError, "signature">): void => {
    // The same exception may reach both the console and the page-error event: one signature for both.
    const signature = errorSignature(error.text.replace(/^Uncaught (?:\(in promise\) )?/, ""));
    if (seen.has(signature)) return;
    seen.add(signature);
    errors.push({ ...error, signature });
  };
  const failedUrls = new Set(
    log.network.filter((entry) => (entry.status ?? 0) >= 400).map((entry) => entry.url),
  );
  for (const entry of log.console) {
    if (entry.type !== "error" || RESOURCE_NOISE.test(entry.text)) continue;
    const refused = REFUSED_RESOURCE.exec(entry.text)?.[1];
    if (refused && failedUrls.has(refused)) continue;
    add({ kind: "console", text: entry.text, ...(entry.location ? { location: entry.location } : {}) });
  }
  for (const entry of log.pageErrors)
    add({
      kind: "exception",
      text: entry.message,
      ...(entry.stack ? { location: firstFrame(entry.stack) } : {}),
    });
  return errors;
}

function firstFrame(stack: string): string | undefined {
  return stack
    .split("\n")
    .find((line) => /^\s+at /.test(line))
    ?.trim();
}

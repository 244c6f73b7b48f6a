import type { SystemMap } from "../../map/system-map.ts";
import type { UiGraph } from "./ui-graph.ts";

// Recovery promises in an application's help: sentences telling people that what they delete can be
// restored, recovered or undone, or goes to a trash or recycle bin (for N days). And the other side: any
// sign that the application has such a thing at all (an operation, route, page or link about restoring,
// trash, undoing or deleted items).

/** Pages whose address or title says they explain the application. */
const HELP_PAGE = /help|faq|docs?\b|documentation|support|guide|knowledge|how-?to|manual|questions|tutorial/i;

const DELETION = /\b(?:delet\w*|remov\w*|trash\w*|discard\w*|eras\w*)/i;
const RECOVERY =
  /\b(?:restor\w*|recover\w*|undo\w*|undelet\w*|un-delet\w*|retriev\w*|bring (?:it|them) back|trash|recycle\s*bin|bin)\b/i;
/** A sentence that says the opposite ("cannot be undone") is a warning, not a promise. */
const NEGATION =
  /\b(?:cannot|can ?not|can't|won't|will not|not|never|no longer|permanent\w*|irreversibl\w*|forever|no way)\b/i;

/** What in a map or a walk would let a person get a deleted thing back. */
export const RECOVERY_FEATURE =
  /restor|recover|undelet|undo|trash|recycle|deleted|(?:^|\/)bin(?:$|\/)|archiv/i;

export interface RecoveryPromise {
  /** The help page's path, as walked. */
  page: string;
  role: string;
  sentence: string;
  /** "within 30 days": how long the copy says deleted items are kept. */
  days?: number;
}

/** The readable text of an HTML document with block boundaries kept as line breaks. */
export function readableText(html: string): string {
  return html
    .replace(/<(script|style|noscript|template)[^>]*>[\s\S]*?<\/\1>/gi, " ")
    .replace(/<(?:br|\/p|\/li|\/h\d|\/div|\/dd|\/dt|\/td|\/tr|\/section|\/article)[^>]*>/gi, "\n")
    .replace(/<[^>]+>/g, " ")
    .replace(/&nbsp;/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/[ \t]+/g, " ");
}

export function sentencesOf(text: string): string[] {
  return text
    .split(/\n+|(?<=[.!?])\s+/)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence.length >= 12 && sentence.length <= 400);
}

export function isRecoveryPromise(sentence: string): boolean {
  return DELETION.test(sentence) && RECOVERY.test(sentence) && !NEGATION.test(sentence);
}

/** Recovery promises on the help pages any role reached, each sentence once. */
export function recoveryPromises(graph: UiGraph): RecoveryPromise[] {
  const promises: RecoveryPromise[] = [];
  const seen = new Set<string>();
  for (const walk of graph.roles) {
    for (const page of walk.pages) {
      if (!page.html || page.status !== 200 || !page.text) continue;
      const title = page.text.match(/<title[^>]*>([^<]*)</i)?.[1] ?? "";
      if (!HELP_PAGE.test(page.path) && !HELP_PAGE.test(title)) continue;
      for (const sentence of sentencesOf(readableText(page.text))) {
        if (!isRecoveryPromise(sentence) || seen.has(sentence)) continue;
        seen.add(sentence);
        const days = sentence.match(/\b(\d{1,4})\s*days?\b/i)?.[1];
        promises.push({
          page: page.path,
          role: walk.role,
          sentence,
          ...(days ? { days: Number(days) } : {}),
        });
      }
    }
  }
  return promises;
}

/** Where the application shows a way to get deleted things back, if anywhere: the first sign found. */
export function recoveryFeature(map: SystemMap, graph: UiGraph): string | undefined {
  for (const operation of map.operations) {
    const words = `${operation.path} ${operation.operation_id ?? ""} ${operation.summary ?? ""}`;
    if (RECOVERY_FEATURE.test(words)) return `${operation.method.toUpperCase()} ${operation.path}`;
  }
  for (const route of map.routes)
    if (RECOVERY_FEATURE.test(route.path)) return `${route.method.toUpperCase()} ${route.path} (source)`;
  for (const page of map.pages) if (RECOVERY_FEATURE.test(page.path)) return `page ${page.path}`;
  for (const walk of graph.roles)
    for (const page of walk.pages) {
      if (RECOVERY_FEATURE.test(page.path)) return `page ${page.path}`;
      const link = page.links.find((each) => RECOVERY_FEATURE.test(each.split("?")[0] ?? each));
      if (link) return `link ${link} on ${page.path}`;
    }
  return undefined;
}

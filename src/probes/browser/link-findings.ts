import type { APIRequestContext } from "playwright-core";
import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { templateOfConcrete } from "../../map/inventory.ts";
import type { Operation } from "../../map/system-map.ts";
import type { ToolContext } from "../../tools/context.ts";
import { workInOrder } from "../http/concurrency.ts";
import type { Masker } from "../http/masking.ts";
import { carriesRunMarker } from "../schema-values/valid-value.ts";
import type { RenderedLink, TargetCheck } from "./broken-links.ts";
import { checkTarget, isBrokenStatus } from "./broken-links.ts";
import { uiFinding } from "./ui-finding.ts";

// The links a role's pages render, gathered per target, then each target requested with the role's
// cookies. A target answering 404, 410 or 5xx is requested a second time; both answers broken make one
// finding at the target's template, listing every page that links there and the link texts.

export class LinkBook {
  private readonly targets = new Map<string, { from: Set<string>; texts: Set<string> }>();

  add(fromPage: string, links: readonly RenderedLink[]): void {
    for (const link of links) {
      let entry = this.targets.get(link.url);
      if (!entry) {
        entry = { from: new Set(), texts: new Set() };
        this.targets.set(link.url, entry);
      }
      entry.from.add(fromPage);
      if (link.text) entry.texts.add(link.text);
    }
  }

  entries(): Array<{ url: string; from: string[]; texts: string[] }> {
    return [...this.targets].map(([url, entry]) => ({ url, from: [...entry.from], texts: [...entry.texts] }));
  }
}

export interface LinkScope {
  context: ToolContext;
  masker: Masker;
  baseUrl: string;
  role: string;
  operations: readonly Operation[];
  /** Draft keys already answered (also the targets already found broken for another role). */
  seen: Set<string>;
  /** Targets already requested this call, by URL: each is judged once. */
  checked: Set<string>;
  refuse?: (method: string, url: string) => string | undefined;
  deadline: number;
  maxChecks: number;
}

/** Link checks in flight at once: each is one plain GET, and a list of records can link dozens. */
const CHECKS_AT_ONCE = 4;

/**
 * `request` carries the role's cookies (a browser context's). Targets are requested one per template first,
 * then a second per template, and so on: a list page linking fifty records must not spend the checks
 * before the links of the other pages are reached. A few are requested at once; the findings follow the
 * targets' order, whichever answered first.
 */
export async function brokenLinkDrafts(
  request: APIRequestContext,
  book: LinkBook,
  scope: LinkScope,
): Promise<{ drafts: EnvelopeDraft[]; checked: number }> {
  const drafts: EnvelopeDraft[] = [];
  const keyOf = (template: string) => `broken-link|${template}|link`;
  const checked = await workInOrder(templatesFirst(book.entries(), scope.operations), {
    width: CHECKS_AT_ONCE,
    cap: scope.maxChecks,
    mayStart: () => Date.now() <= scope.deadline,
    work: async ({ url, texts, template }) => {
      if (scope.checked.has(url) || scope.refuse?.("GET", url) || scope.seen.has(keyOf(template)))
        return undefined;
      // A record the run made may be deleted by another of its probes between the page and the check.
      if (texts.some(carriesRunMarker) || carriesRunMarker(url)) return undefined;
      scope.checked.add(url);
      const first = await checkTarget(request, url);
      const second = isBrokenStatus(first.status) ? await checkTarget(request, url) : undefined;
      return { first, second };
    },
    decide: async ({ url, from, texts, template }, { first, second }) => {
      // Another target of the same template may have been found broken first.
      if (!second || !isBrokenStatus(second.status) || scope.seen.has(keyOf(template))) return false;
      scope.seen.add(keyOf(template));
      drafts.push(linkDraft(scope, { url, from, texts, template }, first, second));
      return false;
    },
  });
  return { drafts, checked };
}

function linkDraft(
  scope: LinkScope,
  link: { url: string; from: string[]; texts: string[]; template: string },
  first: TargetCheck,
  second: TargetCheck,
): EnvelopeDraft {
  const { from, texts, template } = link;
  const target = new URL(link.url);
  const path = `${target.pathname}${target.search}`;
  const linking = from[0] ?? "/";
  const text = texts[0] ?? "";
  return uiFinding(scope.context, scope.masker, {
    defectClass: "broken-link",
    location: template,
    role: scope.role,
    baseUrl: scope.baseUrl,
    title: `Broken link to ${template} (answers ${first.status})${text ? `: "${text}"` : ""}`,
    summary: `${from.length} page(s) link to ${path} (${from.slice(0, 5).join(", ")}), which answers ${first.status} to ${scope.role}, and ${second.status} when requested again.`,
    impact: "A person following the link lands on an error instead of what the link promised.",
    severity: (first.status ?? 0) >= 500 ? "medium" : "low",
    confidence: 0.9,
    discriminator: "link",
    steps: [
      `open ${linking} as ${scope.role}`,
      `follow the link${text ? ` "${text}"` : ""} to ${path}`,
      `it answers ${first.status}`,
    ],
    observed: { target: path, role: scope.role, linkedFrom: from, linkTexts: texts, first, second },
    notes: [
      `linked from: ${from.join(", ")}`,
      `link text: ${texts.map((t) => `"${t}"`).join(", ") || "(none)"}`,
    ],
    assertion: { kind: "link", page: linking, target: path },
  });
}

/** Link targets ordered by their rank within their template (stable): each template's first, then seconds. */
function templatesFirst(
  entries: ReadonlyArray<{ url: string; from: string[]; texts: string[] }>,
  operations: readonly Operation[],
): Array<{ url: string; from: string[]; texts: string[]; template: string }> {
  const seenOf = new Map<string, number>();
  return entries
    .map((entry, index) => {
      const template = templateOfConcrete(new URL(entry.url).pathname, operations);
      const rank = seenOf.get(template) ?? 0;
      seenOf.set(template, rank + 1);
      return { ...entry, template, rank, index };
    })
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .map(({ rank: _rank, index: _index, ...entry }) => entry);
}

import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Viewport } from "./browser-session.ts";
import type { FaultPair } from "./layout-check.ts";
import type { Overflow } from "./layout-measure.ts";
import type { PageScope } from "./page-findings.ts";
import { uiFinding } from "./ui-finding.ts";

// Confirmed layout faults → envelope drafts of class visual-defect, one per page template and fault (the
// same selectors): sideways overflow at phone width, a control lying under another element, text cut off by
// its box. `related`: other templates whose shared frame shows the same fault.

export function overflowDraft(
  scope: PageScope,
  overflow: { first: Overflow; second: Overflow },
  screenshot: Uint8Array | undefined,
  related: string[] = [],
): EnvelopeDraft | undefined {
  const key = `visual-defect|${scope.template}|mobile-overflow`;
  if (scope.seen.has(key)) return undefined;
  scope.seen.add(key);
  const { first, second } = overflow;
  const culprit = first.culprit
    ? ` The widest element sticking out is ${first.culprit.selector} (${first.culprit.width}px wide, right edge at ${first.culprit.right}px).`
    : "";
  return uiFinding(scope.context, scope.masker, {
    role: scope.role,
    baseUrl: scope.baseUrl,
    location: scope.template,
    ...(screenshot ? { screenshot } : {}),
    defectClass: "visual-defect",
    title: `${scope.template} overflows a phone screen sideways (${first.scrollWidth}px at ${first.viewportWidth}px)`,
    summary: `At mobile width (${first.viewportWidth}px) ${scope.path} is ${first.scrollWidth}px wide and scrolls sideways, on two loads (${second.scrollWidth}px the second time).${culprit}${elsewhere(first.culprit?.chrome, related)}`,
    ...(related.length > 0 ? { related } : {}),
    impact: "On a phone part of the page is off screen and the page pans sideways while reading.",
    severity: "low",
    confidence: 0.8,
    discriminator: "mobile-overflow",
    steps: [`open ${scope.path} as ${scope.role} at 390px width (mobile)`, "scroll sideways: the page moves"],
    observed: { page: scope.path, role: scope.role, first, second },
    notes: first.culprit ? [`widest offending element: ${first.culprit.selector}`] : [],
    assertion: { kind: "overflow", page: scope.path },
  });
}

export function layoutFaultDraft(
  scope: PageScope,
  { first, second }: FaultPair,
  viewport: Viewport,
  screenshot: Uint8Array | undefined,
  related: string[] = [],
): EnvelopeDraft | undefined {
  const discriminator =
    first.kind === "overlap"
      ? `overlap ${first.selector} under ${first.covering}`
      : `clipped ${first.selector}`;
  const key = `visual-defect|${scope.template}|${discriminator}`;
  if (scope.seen.has(key)) return undefined;
  scope.seen.add(key);
  const width = `${viewport.width}px width (${viewport.name})`;
  const quoted = first.text ? ` "${first.text}"` : "";
  const others = first.count > 1 ? ` ${first.count - 1} more element(s) of the page show the same.` : "";
  const common = {
    role: scope.role,
    baseUrl: scope.baseUrl,
    location: scope.template,
    ...(screenshot ? { screenshot } : {}),
    ...(related.length > 0 ? { related } : {}),
    defectClass: "visual-defect" as const,
    discriminator,
    observed: { page: scope.path, role: scope.role, viewport, first, second },
    notes: [`${first.selector}: ${first.detail}`],
    assertion: {
      kind: "layout-fault" as const,
      fault: first.kind,
      page: scope.path,
      selector: first.path,
      mobile: viewport.isMobile === true,
    },
  };
  const open = `open ${scope.path} as ${scope.role} at ${width}`;
  if (first.kind === "overlap")
    return uiFinding(scope.context, scope.masker, {
      ...common,
      title: `${scope.template}: the control${quoted} lies under ${first.covering} at ${viewport.name} width`,
      summary: `At ${width}, ${first.selector}${quoted} on ${scope.path} is covered: ${first.detail}, on two loads.${others}${elsewhere(first.chrome, related)}`,
      impact:
        "A person who clicks or taps the control reaches the element on top of it instead; part of it is hidden.",
      severity: "medium",
      confidence: 0.75,
      steps: [open, `click the middle of ${first.selector}${quoted}: ${first.covering} receives the click`],
    });
  return uiFinding(scope.context, scope.masker, {
    ...common,
    title: `${scope.template}: the text of ${first.selector} is cut off at ${viewport.name} width`,
    summary: `At ${width}, ${first.selector} on ${scope.path} hides part of its text${quoted}: ${first.detail}, on two loads.${others}${elsewhere(first.chrome, related)}`,
    impact:
      "Part of the words is not shown and cannot be read; there is no ellipsis or other sign that text is missing.",
    severity: "low",
    confidence: 0.75,
    steps: [open, `read ${first.selector}: its text stops at the edge of its box`],
  });
}

function elsewhere(chrome: string | undefined, related: string[]): string {
  return related.length > 0
    ? ` It is part of the frame every page shares (${chrome}): ${related.join(", ")} show the same.`
    : "";
}

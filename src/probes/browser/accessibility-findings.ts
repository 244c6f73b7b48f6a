import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { AxeViolation } from "./accessibility-scan.ts";
import type { ConfirmedPage } from "./page-checks.ts";
import type { PageScope } from "./page-findings.ts";
import { uiFinding } from "./ui-finding.ts";

// Confirmed axe violations → one finding per rule and component. Most pages of an app are drawn in one
// frame (a header, a logo, a footer): an unlabelled logo there fails the same rule on every page, and is
// one defect for the one person who fixes the frame, not one per page. So the drafts wait until every page
// has been scanned: an element (its path and its markup) that fails a rule on two page templates or
// more belongs to the shared frame and is reported once, at the first page that showed it, the others as
// related places; what a page fails on its own is that page's finding, as before.

type Confirmed = ConfirmedPage["violations"][number];

interface Scanned {
  scope: PageScope;
  violation: Confirmed;
  screenshot: Uint8Array | undefined;
}

/** A failing element: its selector on the page, its markup and its path from the document's root. */
interface FailingNode {
  selector: string;
  markup: string;
  path: string;
}

export class AccessibilityBook {
  /** Per rule, each template's confirmed violation, in the order the pages were visited. */
  private readonly byRule = new Map<string, Scanned[]>();

  add(scope: PageScope, page: Pick<ConfirmedPage, "violations" | "screenshot">): void {
    for (const violation of page.violations) {
      const scans = this.byRule.get(violation.first.rule) ?? [];
      // A template is scanned once, unless its first visit was skipped and another role's scanned it.
      if (scans.some((scan) => scan.scope.template === scope.template)) continue;
      scans.push({ scope, violation, screenshot: page.screenshot });
      this.byRule.set(violation.first.rule, scans);
    }
  }

  drafts(): EnvelopeDraft[] {
    const drafts: EnvelopeDraft[] = [];
    for (const scans of this.byRule.values()) {
      const templatesOf = new Map<string, Set<string>>();
      for (const { scope, violation } of scans)
        for (const node of failingNodes(violation.first))
          templatesOf.set(keyOf(node), (templatesOf.get(keyOf(node)) ?? new Set()).add(scope.template));
      const isShared = (node: FailingNode) => (templatesOf.get(keyOf(node))?.size ?? 0) > 1;

      // `tested`: the frame's elements as the first page names them, the page its generated test opens.
      let frame: { at: Scanned; nodes: FailingNode[]; related: string[]; tested: string[] } | undefined;
      for (const scan of scans) {
        const nodes = failingNodes(scan.violation.first);
        const shared = nodes.filter(isShared);
        const own = nodes.filter((node) => !isShared(node));
        // Nodes past axe's listed few cannot be told apart: the page keeps a finding for them.
        const unlisted = scan.violation.first.nodeCount - nodes.length;
        if (own.length > 0 || unlisted > 0) drafts.push(pageDraft(scan, own, unlisted, shared.length > 0));
        if (shared.length === 0) continue;
        if (!frame)
          frame = { at: scan, nodes: shared, related: [], tested: shared.map((node) => node.selector) };
        else {
          frame.related.push(scan.scope.template);
          for (const node of shared)
            if (!frame.nodes.some((known) => keyOf(known) === keyOf(node))) frame.nodes.push(node);
        }
      }
      if (frame) drafts.push(frameDraft(frame.at, frame.nodes, frame.related, frame.tested));
    }
    return drafts;
  }
}

function failingNodes(violation: AxeViolation): FailingNode[] {
  return violation.nodes.map((selector, index) => ({
    selector,
    markup: violation.markup[index] ?? "",
    path: violation.paths[index] ?? selector,
  }));
}

function keyOf(node: FailingNode): string {
  return `${node.path}\u0000${node.markup}`;
}

/**
 * The page's own failing elements. When some of its elements went to the frame's finding, its test checks
 * only its own (`split`): fixing the page must make it pass while the frame is still broken.
 */
function pageDraft(scan: Scanned, own: FailingNode[], unlisted: number, split: boolean) {
  const { first, second } = scan.violation;
  return draft(scan, {
    title: `${scan.scope.template}: ${first.help} (axe ${first.rule}, ${first.impact})`,
    summary: `An axe scan (WCAG 2 A/AA) of ${scan.scope.path} as ${scan.scope.role} reports ${first.rule} (${first.impact}) on ${own.length + unlisted} element(s) of this page, again after a reload (${second.nodeCount} element(s) then): ${first.help}.`,
    discriminator: first.rule,
    nodes: own,
    unlisted,
    ...(split && own.length > 0 ? { selectors: own.map((node) => node.selector) } : {}),
  });
}

function frameDraft(scan: Scanned, nodes: FailingNode[], related: string[], tested: string[]) {
  const { first } = scan.violation;
  const { scope } = scan;
  return draft(scan, {
    title: `${scope.template} and ${related.length} other page(s): ${first.help} (axe ${first.rule}, ${first.impact})`,
    summary: `An axe scan (WCAG 2 A/AA) reports ${first.rule} (${first.impact}) on ${nodes.length} element(s) of the frame the pages share: the same element, with the same markup, fails on ${scope.template} (as ${scope.role}, again after a reload) and on ${related.join(", ")}. ${first.help}.`,
    discriminator: `${first.rule} shared`,
    nodes,
    unlisted: 0,
    selectors: tested,
    related,
  });
}

function draft(
  { scope, violation, screenshot }: Scanned,
  found: {
    title: string;
    summary: string;
    discriminator: string;
    nodes: FailingNode[];
    unlisted: number;
    selectors?: string[];
    related?: string[];
  },
): EnvelopeDraft {
  const { first, second } = violation;
  const { role, path, template } = scope;
  return uiFinding(scope.context, scope.masker, {
    role,
    baseUrl: scope.baseUrl,
    location: template,
    ...(found.related?.length ? { related: found.related } : {}),
    ...(screenshot ? { screenshot } : {}),
    defectClass: "accessibility",
    title: found.title,
    summary: found.summary,
    impact: `People using assistive technology are blocked or misled here (${first.impact} impact): ${first.help}.`,
    severity: first.impact === "critical" ? "medium" : "low",
    confidence: 0.85,
    discriminator: found.discriminator,
    steps: [
      `open ${path} as ${role} in a browser at desktop width and wait for the network to settle`,
      `run axe with tags wcag2a, wcag2aa: rule ${first.rule} fails on ${found.nodes
        .slice(0, 5)
        .map((node) => node.selector)
        .join(", ")}`,
    ],
    observed: { page: path, role, first, second },
    notes: [
      `nodes: ${found.nodes.map((node) => `${node.selector} ${node.markup}`.trim()).join(" | ")}${found.unlisted > 0 ? ` (+${found.unlisted} more)` : ""}`,
      `rule: ${first.helpUrl}`,
    ],
    assertion: {
      kind: "accessibility",
      page: path,
      rule: first.rule,
      ...(found.selectors ? { selectors: found.selectors } : {}),
    },
  });
}

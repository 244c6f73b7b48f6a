import axe from "axe-core";
import type { Page } from "playwright-core";
import { boundedCall, EVALUATE_MS } from "./bounded-call.ts";

// An axe scan held to WCAG 2 A and AA and to what blocks people: only `serious` and `critical` impacts.
// One result per rule (the nodes are listed, not reported one by one), so a page with forty unlabelled
// inputs is one finding with forty selectors. axe-core is put into each frame once and run in the page,
// answering violations only: @axe-core/playwright's builder injects it twice per frame and merges frame
// results in a blank tab of its own, which cost three times the CPU per scan on a two-core machine.

export const AXE_TAGS = ["wcag2a", "wcag2aa"];
const BLOCKING = new Set(["serious", "critical"]);
const MAX_NODES = 20;
const MARKUP_CHARS = 200;

export interface AxeViolation {
  rule: string;
  impact: string;
  help: string;
  helpUrl: string;
  /** CSS selectors of the offending nodes (first few). */
  nodes: string[];
  /** The same nodes' markup, whitespace collapsed and cut short. */
  markup: string[];
  /**
   * The same nodes' full paths from the document's root. With the markup, what tells a page's own element
   * from one of the frame every page shares: the short selectors above depend on the rest of the page.
   */
  paths: string[];
  /** How many nodes in all. */
  nodeCount: number;
  /** axe's own explanation of the first node. */
  failureSummary?: string;
}

interface AxeRun {
  violations: Array<{
    id: string;
    impact?: string | null;
    help: string;
    helpUrl: string;
    nodes: Array<{ target: unknown[]; ancestry?: unknown[]; html?: string; failureSummary?: string }>;
  }>;
}

/** How long one axe run may take: a large page takes seconds, a stuck one forever. */
const AXE_MS = 30_000;

export async function blockingViolations(page: Page): Promise<AxeViolation[] | string> {
  try {
    // Frames first, the page last: axe in the top document asks each frame that has axe for its part.
    for (const frame of page.frames().reverse())
      await boundedCall(frame.evaluate(axe.source), EVALUATE_MS, undefined);
    const scan = page.evaluate(
      (tags) =>
        (
          window as unknown as { axe: { run: (context: Document, options: object) => Promise<unknown> } }
        ).axe.run(document, {
          runOnly: { type: "tag", values: tags },
          resultTypes: ["violations"],
          ancestry: true,
        }),
      AXE_TAGS,
    ) as Promise<AxeRun>;
    // A renderer that never answers (a page stuck in a loop) ends the scan instead of the run.
    const outcome = await boundedCall(
      scan.then(
        (run) => ({ run }),
        (error: unknown) => ({ error }),
      ),
      AXE_MS,
      undefined,
    );
    if (!outcome) return "axe did not answer in time";
    if ("error" in outcome) throw outcome.error;
    const results = outcome.run;
    return results.violations
      .filter((violation) => BLOCKING.has(violation.impact ?? ""))
      .map((violation) => ({
        rule: violation.id,
        impact: violation.impact ?? "serious",
        help: violation.help,
        helpUrl: violation.helpUrl,
        nodes: violation.nodes.slice(0, MAX_NODES).map((node) => node.target.map(String).join(" ")),
        markup: violation.nodes
          .slice(0, MAX_NODES)
          .map((node) => (node.html ?? "").replace(/\s+/g, " ").trim().slice(0, MARKUP_CHARS)),
        paths: violation.nodes
          .slice(0, MAX_NODES)
          .map((node) => (node.ancestry ?? node.target).map(String).join(" ")),
        nodeCount: violation.nodes.length,
        ...(violation.nodes[0]?.failureSummary ? { failureSummary: violation.nodes[0].failureSummary } : {}),
      }));
  } catch (error) {
    return `axe did not run: ${(error instanceof Error ? error.message : String(error)).split("\n")[0]}`;
  }
}

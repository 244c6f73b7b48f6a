import { AxeBuilder } from "@axe-core/playwright";
import type { Page } from "playwright-core";

// An axe scan held to WCAG 2 A and AA and to what blocks people: only `serious` and `critical` impacts.
// One result per rule (the nodes are listed, not reported one by one), so a page with forty unlabelled
// inputs is one finding with forty selectors.

export const AXE_TAGS = ["wcag2a", "wcag2aa"];
const BLOCKING = new Set(["serious", "critical"]);
const MAX_NODES = 20;

export interface AxeViolation {
  rule: string;
  impact: string;
  help: string;
  helpUrl: string;
  /** CSS selectors of the offending nodes (first few). */
  nodes: string[];
  /** How many nodes in all. */
  nodeCount: number;
  /** axe's own explanation of the first node. */
  failureSummary?: string;
}

export async function blockingViolations(page: Page): Promise<AxeViolation[] | string> {
  try {
    const results = await new AxeBuilder({ page })
      .withTags(AXE_TAGS)
      .options({ resultTypes: ["violations"] })
      .setLegacyMode(true)
      .analyze();
    return results.violations
      .filter((violation) => BLOCKING.has(violation.impact ?? ""))
      .map((violation) => ({
        rule: violation.id,
        impact: violation.impact ?? "serious",
        help: violation.help,
        helpUrl: violation.helpUrl,
        nodes: violation.nodes.slice(0, MAX_NODES).map((node) => node.target.map(String).join(" ")),
        nodeCount: violation.nodes.length,
        ...(violation.nodes[0]?.failureSummary ? { failureSummary: violation.nodes[0].failureSummary } : {}),
      }));
  } catch (error) {
    return `axe did not run: ${(error instanceof Error ? error.message : String(error)).split("\n")[0]}`;
  }
}

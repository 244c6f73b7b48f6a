import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../envelope/envelope-draft.ts";
import type { Severity } from "../../envelope/taxonomy.ts";
import type { ReproScript } from "../evidence/failing-test.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { HttpExchange } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";

// A usability finding → an envelope draft located at the page template: the HTTP exchange that shows the
// page works when typed (replayable with curl), the facts the judgement rests on as a JSON artifact (which
// pages were searched and what they offer), and a screenshot when the browser took one.

export interface GuideFindingInput {
  /** usability by default; a form journey that breaks is a `ui` finding built the same way. */
  domain?: "usability" | "ui";
  defectClass: "undiscoverable-feature" | "dead-end" | "misleading-copy" | "broken-journey";
  template: string;
  title: string;
  summary: string;
  impact: string;
  severity: Severity;
  confidence: number;
  exchanges: Array<{ label: string; exchange: HttpExchange }>;
  /** What was examined, written as `<folder>/facts.json`. */
  facts: Record<string, unknown>;
  screenshot?: Uint8Array;
  steps: string[];
  notes?: string[];
  discriminator?: string;
  /** A replay of the request behind the finding as a failing test, when one request shows it. */
  repro?: ReproScript;
  suggestedFixArea?: string;
}

function slugOf(input: GuideFindingInput): string {
  return `${input.defectClass}-${input.template}${input.discriminator ? `-${input.discriminator}` : ""}`
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .slice(0, 80);
}

export function guideFinding(run: ProbeRun, input: GuideFindingInput): EnvelopeDraft {
  const draft = buildFinding(run, {
    domain: input.domain ?? "usability",
    defectClass: input.defectClass,
    title: input.title,
    summary: input.summary,
    impact: input.impact,
    location: { kind: "page", value: input.template },
    severity: input.severity,
    confidence: input.confidence,
    exchanges: input.exchanges,
    steps: input.steps,
    ...(input.notes ? { notes: input.notes } : {}),
    ...(input.discriminator ? { discriminator: input.discriminator } : {}),
    ...(input.repro ? { repro: input.repro } : {}),
    suggestedFixArea: input.suggestedFixArea ?? "navigation and page templates (menus, links, help copy)",
  });
  const folder = `${run.tool}/${slugOf(input)}`;
  draft.evidence.push({
    kind: "artifact",
    description: "what was examined: the reachable pages searched, their links and the signals checked",
    uri: run.context.putArtifact(
      `${folder}/facts.json`,
      `${run.masker.maskText(JSON.stringify(input.facts, null, 2))}\n`,
    ),
  });
  if (input.screenshot) {
    draft.evidence.push({
      kind: "artifact",
      description: "screenshot of the page as rendered in the browser",
      uri: run.context.putArtifact(`${folder}/page.png`, input.screenshot),
    });
  }
  return EnvelopeDraftSchema.parse(draft);
}

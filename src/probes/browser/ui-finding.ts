import { createHash } from "node:crypto";
import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../envelope/envelope-draft.ts";
import type { DefectClass, Severity } from "../../envelope/taxonomy.ts";
import type { ToolContext } from "../../tools/context.ts";
import type { Masker } from "../http/masking.ts";
import type { BrowserAssertion } from "./browser-test.ts";
import { renderBrowserTest } from "./browser-test.ts";

// A confirmed browser finding → an envelope draft of domain `ui` at a page template: a screenshot of the
// page, what the browser recorded (console lines, network exchanges, axe output) as a JSON artifact, the
// steps a person follows, and a generated browser test that fails while the defect exists.

export interface UiFindingInput {
  defectClass: Extract<
    DefectClass,
    "broken-journey" | "console-error" | "broken-link" | "accessibility" | "visual-defect"
  >;
  /** Path template the finding is at (`/projects/{id}`). */
  location: string;
  /** Other page templates where the same defect shows. */
  related?: string[];
  title: string;
  summary: string;
  impact: string;
  severity: Severity;
  confidence: number;
  discriminator?: string;
  role: string;
  baseUrl: string;
  steps: string[];
  /** What the browser saw, written as `observed.json`. */
  observed: Record<string, unknown>;
  /** One-line excerpts worth reading without opening an artifact. */
  notes?: string[];
  screenshot?: Uint8Array;
  assertion: BrowserAssertion;
  fixArea?: string;
}

export function uiFinding(context: ToolContext, masker: Masker, input: UiFindingInput): EnvelopeDraft {
  const slug = slugOf(input);
  const folder = `browse_pages/${slug}`;
  const evidence: EnvelopeDraft["evidence"] = [];
  if (input.screenshot)
    evidence.push({
      kind: "artifact",
      description: `screenshot of ${input.assertion.page} as ${input.role}`,
      uri: context.putArtifact(`${folder}/screenshot.png`, input.screenshot),
    });
  evidence.push({
    kind: "log",
    description: "what the browser recorded (console, network, measurements), both loads",
    uri: context.putArtifact(
      `${folder}/observed.json`,
      masker.maskText(`${JSON.stringify(input.observed, null, 2)}\n`),
    ),
  });
  for (const note of input.notes ?? []) evidence.push({ kind: "note", description: masker.maskText(note) });
  const test = renderBrowserTest(
    { title: input.title, baseUrl: input.baseUrl, role: input.role, assertion: input.assertion },
    slug,
  );
  const uri = context.putArtifact(`${folder}/${slug}.test.mjs`, masker.maskText(test.content));
  evidence.push({
    kind: "failing_test",
    description: `generated browser test (node --test, playwright-core) asserting the working behaviour; fails while the defect exists; artifact ${uri}`,
    uri,
    test: { path: test.path, name: input.title, command: test.command },
  });
  return EnvelopeDraftSchema.parse({
    domain: "ui",
    defect_class: input.defectClass,
    title: truncate(masker.maskText(input.title), 200),
    summary: masker.maskText(input.summary),
    location: {
      kind: "page",
      value: input.location,
      ...(input.related?.length ? { related: input.related.map((value) => ({ kind: "page", value })) } : {}),
    },
    evidence,
    reproduction: {
      steps: input.steps.map((step) => masker.maskText(step)),
      test: { path: test.path, command: test.command },
    },
    impact: input.impact,
    severity: input.severity,
    confidence: input.confidence,
    suggested_fix_area: input.fixArea ?? null,
    autonomy_eligible: false,
    ...(input.discriminator ? { dedupe: { discriminator: input.discriminator } } : {}),
  });
}

function slugOf(input: UiFindingInput): string {
  const base = `${input.defectClass}-${input.location}-${input.discriminator ?? ""}`
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .slice(0, 60);
  const hash = createHash("sha256")
    .update(`${input.defectClass}|${input.location}|${input.discriminator ?? ""}`)
    .digest("hex")
    .slice(0, 8);
  return `${base}-${hash}`;
}

function truncate(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}

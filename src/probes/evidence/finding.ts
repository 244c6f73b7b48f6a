import { createHash } from "node:crypto";
import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../envelope/envelope-draft.ts";
import type { DefectClass, Domain, LocationKind, Severity } from "../../envelope/taxonomy.ts";
import { curlLine } from "../http/curl.ts";
import { recordExchange } from "../http/exchange-record.ts";
import type { HttpExchange } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { ReproScript } from "./failing-test.ts";
import { renderFailingTest } from "./failing-test.ts";

export interface FindingInput {
  domain: Domain;
  defectClass: DefectClass;
  title: string;
  summary: string;
  impact: string;
  location: { kind: LocationKind; value: string };
  related?: Array<{ kind: LocationKind; value: string }>;
  severity: Severity;
  confidence: number;
  discriminator?: string;
  /** The exchanges that prove it, each with what it shows; the first is the one curl replays. */
  exchanges: Array<{ label: string; exchange: HttpExchange }>;
  /** The reproduction as a failing test (omitted for findings that are not about a request). */
  repro?: ReproScript;
  steps?: string[];
  notes?: string[];
  suggestedFixArea?: string;
}

/** Where a generated test would live in the target (REPRODUCER commits it there). */
export const REPRO_TEST_FOLDER = "tests/qaas";

function slugOf(input: FindingInput): string {
  const base = `${input.defectClass}-${input.location.value}-${input.discriminator ?? ""}`
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .slice(0, 70);
  const hash = createHash("sha256")
    .update(
      `${input.domain}|${input.defectClass}|${input.location.kind}|${input.location.value}|${input.discriminator ?? ""}`,
    )
    .digest("hex")
    .slice(0, 8);
  return `${base}-${hash}`;
}

/**
 * Turns a confirmed finding into an envelope draft: every exchange written as a masked artifact, a curl
 * line, and a generated `node --test` file (an artifact too) referenced by the reproduction and by a
 * `failing_test` evidence item.
 */
export function buildFinding(run: ProbeRun, input: FindingInput): EnvelopeDraft {
  const slug = slugOf(input);
  const folder = `${run.tool}/${slug}`;
  const evidence: EnvelopeDraft["evidence"] = input.exchanges.map(({ label, exchange }, index) => ({
    kind: "exchange" as const,
    description: `${label}: ${exchange.request.method} ${run.masker.maskUrl(exchange.request.url)} as ${exchange.user ?? "anonymous"} → ${exchange.response?.status ?? exchange.error ?? "no answer"}`,
    uri: recordExchange(
      run.context,
      `${folder}/${String(index + 1).padStart(2, "0")}-${label}`,
      exchange,
      run.masker,
    ),
  }));
  for (const note of input.notes ?? [])
    evidence.push({ kind: "note", description: run.masker.maskText(note) });
  const reproduction: EnvelopeDraft["reproduction"] = {
    steps:
      input.steps ??
      input.exchanges.map(
        ({ label, exchange }) =>
          `${label}: ${exchange.request.method} ${run.masker.maskUrl(exchange.request.url)} as ${exchange.user ?? "anonymous"}`,
      ),
  };
  const first = input.exchanges[0]?.exchange;
  if (first) reproduction.curl = curlLine(first, run.masker);
  if (input.repro) {
    const content = run.masker.maskText(
      renderFailingTest(input.repro, run.target.profile, run.target.baseUrl),
    );
    const testPath = `${REPRO_TEST_FOLDER}/${slug}.test.mjs`;
    const command = `node --test ${testPath}`;
    const uri = run.context.putArtifact(`${folder}/${slug}.test.mjs`, content);
    reproduction.test = { path: testPath, command };
    evidence.push({
      kind: "failing_test",
      description: `generated node --test file asserting the correct behaviour (fails while the defect exists); artifact ${uri}`,
      uri,
      test: { path: testPath, name: input.repro.title, command },
    });
  }
  const draft = {
    domain: input.domain,
    defect_class: input.defectClass,
    title: truncate(run.masker.maskText(input.title), 200),
    summary: run.masker.maskText(input.summary),
    location: {
      kind: input.location.kind,
      value: input.location.value,
      ...(input.related?.length ? { related: input.related } : {}),
    },
    evidence,
    reproduction,
    impact: input.impact,
    severity: input.severity,
    confidence: input.confidence,
    suggested_fix_area: input.suggestedFixArea ?? null,
    autonomy_eligible: false,
    ...(input.discriminator ? { dedupe: { discriminator: input.discriminator } } : {}),
  };
  return EnvelopeDraftSchema.parse(draft);
}

function truncate(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}

/** Key a playbook (or a probe) deduplicates candidates by. */
export function candidateKey(draft: Pick<EnvelopeDraft, "defect_class" | "location" | "dedupe">): string {
  return `${draft.defect_class}\u0000${draft.location.kind}:${draft.location.value}\u0000${draft.dedupe?.discriminator ?? ""}`;
}

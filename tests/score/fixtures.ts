import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type DefectEnvelope, EnvelopeSchema, fingerprint } from "../../src/envelope/envelope.ts";
import type { LocationKind } from "../../src/envelope/taxonomy.ts";

// Synthetic findings and ledgers for the scoring tests. Every envelope passes the real schema, so the tests
// score exactly what a run store would hold.

export interface EnvelopeInput {
  id: string;
  domain?: DefectEnvelope["domain"];
  defect_class?: string;
  severity?: DefectEnvelope["severity"];
  kind?: LocationKind;
  value?: string;
  related?: Array<{ kind: LocationKind; value: string }>;
  confidence?: number;
  discovered_at?: string;
  withEvidence?: boolean;
  notReproducible?: boolean;
}

let clock = Date.parse("2026-11-30T10:00:00Z");

export function envelope(input: EnvelopeInput): DefectEnvelope {
  clock += 1000;
  const domain = input.domain ?? "security";
  const defectClass = input.defect_class ?? "missing-authorization";
  const location = {
    kind: input.kind ?? "endpoint",
    value: input.value ?? "GET /api/things/1",
    ...(input.related ? { related: input.related } : {}),
  };
  return EnvelopeSchema.parse({
    envelope_version: 1,
    id: input.id,
    run_id: "run-1",
    discovered_by: "PROBER",
    discovered_at: input.discovered_at ?? new Date(clock).toISOString(),
    domain,
    defect_class: defectClass,
    title: `finding ${input.id}`,
    summary: "synthetic finding",
    location,
    evidence:
      input.withEvidence === false
        ? [{ kind: "note", description: "a hunch" }]
        : [{ kind: "artifact", description: "response", uri: `artifact://run-1/${input.id}.json` }],
    reproduction: { steps: ["call it"], ...(input.notReproducible ? { not_reproducible: true } : {}) },
    impact: "someone is hurt",
    severity: input.severity ?? "high",
    confidence: input.confidence ?? 0.9,
    suggested_owner: null,
    suggested_fix_area: null,
    autonomy_eligible: false,
    dedupe: { fingerprint: fingerprint({ domain, defect_class: defectClass, location }) },
    tracker: { state: "unfiled", key: null, url: null },
  });
}

export function tempDirectory(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `qaas-score-${prefix}-`));
}

export function writeLedger(text: string, directory = tempDirectory("ledger")): string {
  const file = path.join(directory, "defects.yaml");
  fs.writeFileSync(file, text);
  return file;
}

import { type DefectEnvelope, ENVELOPE_VERSION } from "../../src/envelope/envelope.ts";

/** A valid envelope for store and CLI tests; override what a test is about. */
export function sampleEnvelope(overrides: Partial<DefectEnvelope> = {}): DefectEnvelope {
  return {
    envelope_version: ENVELOPE_VERSION,
    id: "env-1",
    run_id: "run-1",
    discovered_by: "API",
    discovered_at: "2026-11-29T20:00:00.000Z",
    domain: "api",
    defect_class: "unhandled-error",
    title: "Creating an item with an empty body answers 500",
    summary: "The server crashes on an empty JSON body.",
    location: { kind: "endpoint", value: "POST /api/items" },
    evidence: [{ kind: "artifact", description: "exchange", uri: "artifact://run-1/exchange.json" }],
    reproduction: { steps: ["POST /api/items with {}"] },
    impact: "Clients get a 500 instead of a 400.",
    severity: "medium",
    confidence: 0.9,
    suggested_owner: null,
    suggested_fix_area: null,
    autonomy_eligible: true,
    dedupe: { fingerprint: "fp_1" },
    tracker: { state: "unfiled", key: null, url: null },
    ...overrides,
  };
}

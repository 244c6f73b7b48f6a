import { describe, expect, it } from "vitest";
import {
  type DefectEnvelope,
  fingerprint,
  hasEvidence,
  isFileable,
  validateEnvelope,
} from "../../src/envelope/envelope.ts";
import { DEFECT_CLASSES, DOMAIN_CLASSES, DOMAINS, LOCATION_KINDS } from "../../src/envelope/taxonomy.ts";

function envelope(overrides: Partial<DefectEnvelope> = {}): DefectEnvelope {
  return {
    envelope_version: 1,
    id: "env-1",
    run_id: "run-1",
    discovered_by: "API",
    discovered_at: "2026-11-29T10:00:00.000Z",
    domain: "security",
    defect_class: "missing-authorization",
    title: "Another tenant's invoice is readable by id",
    summary: "User B reads user A's invoice.",
    location: {
      kind: "endpoint",
      value: "GET /api/invoices/{id}",
      source: { file: "src/routes/invoices.ts", line: 40 },
    },
    evidence: [{ kind: "artifact", description: "both exchanges", uri: "artifact://run-1/exchanges/1.json" }],
    reproduction: { steps: ["sign in as B", "GET /api/invoices/17"] },
    impact: "Cross-tenant data leak.",
    severity: "high",
    confidence: 0.9,
    suggested_owner: null,
    suggested_fix_area: null,
    autonomy_eligible: false,
    dedupe: { fingerprint: "" },
    tracker: { state: "unfiled", key: null, url: null },
    ...overrides,
  };
}

describe("the taxonomy is exactly the golden ledger's", () => {
  it("has its eight domains, their classes and the six location kinds", () => {
    expect(DOMAINS).toEqual([
      "api",
      "security",
      "data",
      "realtime",
      "performance",
      "ui",
      "usability",
      "architecture",
    ]);
    expect(DOMAIN_CLASSES.data).toEqual(["missing-constraint", "data-integrity"]);
    expect(DEFECT_CLASSES).toHaveLength(5 + 14 + 2 + 5 + 4 + 5 + 3 + 4);
    expect(LOCATION_KINDS).toEqual(["endpoint", "page", "table", "channel", "file", "dependency"]);
  });
});

describe("validation", () => {
  it("accepts a complete envelope", () => {
    expect(validateEnvelope(envelope()).ok).toBe(true);
  });

  it("rejects unknown keys and lists every bad field by path", () => {
    const result = validateEnvelope({
      ...envelope(),
      extra: true,
      severity: "urgent",
      confidence: 1.4,
      location: { kind: "url", value: "" },
      evidence: [{ kind: "artifact", description: "x", uri: "file:///etc/passwd" }],
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const paths = result.errors.map((error) => error.path).sort();
    expect(paths).toEqual([
      "(root)",
      "confidence",
      "evidence.0.uri",
      "location.kind",
      "location.value",
      "severity",
    ]);
    expect(result.errors.find((error) => error.path === "(root)")?.message).toContain("extra");
  });

  it("refuses a class that is not of the envelope's domain", () => {
    const result = validateEnvelope(envelope({ domain: "api", defect_class: "xss" }));
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.errors[0]).toMatchObject({
        path: "defect_class",
        message: expect.stringContaining("not a class of domain"),
      });
  });
});

describe("evidence and fileability", () => {
  it("needs an artifact or a failing test", () => {
    expect(hasEvidence(envelope())).toBe(true);
    expect(hasEvidence(envelope({ evidence: [{ kind: "note", description: "I think so" }] }))).toBe(false);
    expect(
      hasEvidence(
        envelope({
          evidence: [
            {
              kind: "failing_test",
              description: "repro",
              test: { path: "t.test.ts", command: "npx vitest run t.test.ts" },
            },
          ],
        }),
      ),
    ).toBe(true);
  });

  it("is fileable only with evidence, enough confidence and not marked not-reproducible", () => {
    expect(isFileable(envelope(), 0.7)).toBe(true);
    expect(isFileable(envelope({ confidence: 0.5 }), 0.7)).toBe(false);
    expect(isFileable(envelope({ evidence: [] }), 0.7)).toBe(false);
    expect(isFileable(envelope({ reproduction: { steps: [], not_reproducible: true } }), 0.7)).toBe(false);
  });
});

describe("fingerprint", () => {
  it("is shared by two wordings of one defect with other lines, commits, ids and times", () => {
    const first = envelope();
    const second = envelope({
      id: "env-2",
      run_id: "run-9",
      discovered_by: "AUDITOR",
      discovered_at: "2027-01-02T03:04:05.000Z",
      title: "Invoices leak across tenants",
      summary: "Any signed-in user of tenant B can fetch tenant A's invoices by id.",
      location: {
        kind: "endpoint",
        value: "get /api/invoices/17/",
        source: { file: "src/routes/invoices.ts", line: 212 },
      },
      severity: "critical",
      confidence: 0.75,
    });
    expect(fingerprint(first)).toBe(fingerprint(second));
    expect(fingerprint(first)).toBe(
      fingerprint(envelope({ location: { kind: "endpoint", value: "GET /api/invoices/:invoiceId" } })),
    );
  });

  it("differs for another location, another class or another discriminator", () => {
    const base = fingerprint(envelope());
    expect(fingerprint(envelope({ location: { kind: "endpoint", value: "GET /api/orders/{id}" } }))).not.toBe(
      base,
    );
    expect(
      fingerprint(envelope({ location: { kind: "endpoint", value: "DELETE /api/invoices/{id}" } })),
    ).not.toBe(base);
    expect(fingerprint(envelope({ defect_class: "missing-authentication" }))).not.toBe(base);
    expect(fingerprint(envelope({ dedupe: { fingerprint: "", discriminator: "status" } }))).not.toBe(base);
  });
});

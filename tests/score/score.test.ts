import { describe, expect, it } from "vitest";
import type {
  GoldenDefect,
  GoldenLedger,
  GoldenNotDefect,
  LedgerLocation,
} from "../../src/score/golden-ledger.ts";
import { score } from "../../src/score/score.ts";
import { envelope } from "./fixtures.ts";

function defect(
  id: string,
  locations: LedgerLocation[],
  overrides: Partial<Omit<GoldenDefect, "id" | "locations">> = {},
): GoldenDefect {
  return {
    id,
    title: `defect ${id}`,
    domain: "security",
    class: "missing-authorization",
    severity: "high",
    fixed_in: null,
    line: 1,
    ...overrides,
    locations,
  };
}

function notDefect(id: string, locations: LedgerLocation[], domain: GoldenNotDefect["domain"] = "security") {
  return { id, title: `looks wrong ${id}`, domain, locations, why: "on purpose", line: 1 };
}

function ledgerOf(defects: GoldenDefect[], notDefects: GoldenNotDefect[] = []): GoldenLedger {
  return { file: "defects.yaml", ledger_version: 1, target: "t", defects, not_defects: notDefects };
}

const at = (value: string): LedgerLocation => ({ kind: "endpoint", value });
const options = { threshold: 0.7 };

describe("score", () => {
  it("never credits a template finding with a defect at a static route beside it", () => {
    const ledger = ledgerOf([
      defect("DEBUG", [at("GET /users/v1/_debug")], { class: "sensitive-data-exposure" }),
    ]);
    const card = score(
      [envelope({ id: "sqli", value: "GET /users/v1/{name}", defect_class: "injection" })],
      ledger,
      options,
    );
    expect(card.true_positives).toBe(0);
    expect(card.missed.map((missed) => missed.id)).toEqual(["DEBUG"]);
    expect(card.unlisted.map((finding) => finding.envelope_id)).toEqual(["sqli"]);
  });

  it("knows static routes from the run's map, not only from the ledger", () => {
    const ledger = ledgerOf([defect("PROFILE", [at("GET /users/{id}")])]);
    const concrete = envelope({ id: "me", value: "GET /users/me" });
    expect(score([concrete], ledger, options).true_positives).toBe(1);
    const card = score([concrete], ledger, { ...options, routes: ["GET /users/me", "GET /users/{id}"] });
    expect(card.true_positives).toBe(0);
    expect(card.unlisted.map((finding) => finding.envelope_id)).toEqual(["me"]);
    // A value of the parameter still matches: `/users/17` is no route of its own.
    expect(
      score([envelope({ id: "17", value: "GET /users/17" })], ledger, {
        ...options,
        routes: ["GET /users/me"],
      }).true_positives,
    ).toBe(1);
  });

  it("counts the first matching finding as a true positive and later ones as duplicates", () => {
    const ledger = ledgerOf([defect("D1", [at("GET /api/invoices/{id}"), at("GET /api/invoices/{id}/pdf")])]);
    const card = score(
      [
        envelope({ id: "late", value: "GET /api/invoices/9/pdf", discovered_at: "2026-11-30T12:00:00Z" }),
        envelope({ id: "early", value: "get /api/invoices/3/", discovered_at: "2026-11-30T11:00:00+00:00" }),
        envelope({ id: "tie-b", value: "GET /api/invoices/:id", discovered_at: "2026-11-30T13:00:00Z" }),
        envelope({ id: "tie-a", value: "GET /api/invoices/<id>?x=1", discovered_at: "2026-11-30T13:00:00Z" }),
      ],
      ledger,
      options,
    );
    expect(card.matched.map((hit) => [hit.envelope_id, hit.defect_id])).toEqual([["early", "D1"]]);
    expect(card.duplicate_findings.map((finding) => [finding.envelope_id, finding.duplicate_of])).toEqual([
      ["late", "early"],
      ["tie-a", "early"],
      ["tie-b", "early"],
    ]);
    expect(card).toMatchObject({
      true_positives: 1,
      duplicate_count: 3,
      duplicates: 0.75,
      recall: 1,
      precision: 1,
      false_positive_count: 0,
      unlisted_count: 0,
    });
  });

  it("requires the domains to be equal", () => {
    const ledger = ledgerOf([defect("D1", [at("GET /api/admin")])]);
    const card = score(
      [envelope({ id: "E1", domain: "api", defect_class: "wrong-status", value: "GET /api/admin" })],
      ledger,
      options,
    );
    expect(card.true_positives).toBe(0);
    expect(card.unlisted.map((finding) => finding.envelope_id)).toEqual(["E1"]);
    expect(card.missed.map((missed) => missed.id)).toEqual(["D1"]);
  });

  it("matches through a related location", () => {
    const ledger = ledgerOf([
      defect("D1", [{ kind: "file", value: "src/b.ts" }], {
        domain: "architecture",
        class: "circular-dependency",
      }),
    ]);
    const card = score(
      [
        envelope({
          id: "E1",
          domain: "architecture",
          defect_class: "circular-dependency",
          kind: "file",
          value: "./src/a.ts",
          related: [{ kind: "file", value: "./src/b.ts" }],
        }),
      ],
      ledger,
      options,
    );
    expect(card.matched.map((hit) => hit.defect_id)).toEqual(["D1"]);
  });

  describe("a finding matching several defects", () => {
    const shared = [at("POST /api/orders")];

    it("goes to the defect of its own class", () => {
      const ledger = ledgerOf([defect("AUTHZ", shared), defect("INJ", shared, { class: "injection" })]);
      const card = score(
        [envelope({ id: "E1", defect_class: "injection", value: "POST /api/orders" })],
        ledger,
        options,
      );
      expect(card.matched.map((hit) => [hit.envelope_id, hit.defect_id, hit.class_agrees])).toEqual([
        ["E1", "INJ", true],
      ]);
    });

    it("else to one not yet matched", () => {
      const ledger = ledgerOf([
        defect("FIRST", shared, { class: "csrf" }),
        defect("SECOND", shared, { class: "injection" }),
      ]);
      const card = score(
        [
          envelope({ id: "E1", defect_class: "xss", value: "POST /api/orders" }),
          envelope({ id: "E2", defect_class: "xss", value: "POST /api/orders" }),
          envelope({ id: "E3", defect_class: "xss", value: "POST /api/orders" }),
        ],
        ledger,
        options,
      );
      expect(card.matched.map((hit) => [hit.envelope_id, hit.defect_id])).toEqual([
        ["E1", "FIRST"],
        ["E2", "SECOND"],
      ]);
      // Else the first in file order: both are taken, so E3 duplicates FIRST.
      expect(card.duplicate_findings.map((finding) => [finding.envelope_id, finding.defect_id])).toEqual([
        ["E3", "FIRST"],
      ]);
      expect(card.class_agreement).toBe(0);
    });

    it("prefers the class even when that defect is already matched", () => {
      const ledger = ledgerOf([defect("AUTHZ", shared), defect("INJ", shared, { class: "injection" })]);
      const card = score(
        [
          envelope({ id: "E1", defect_class: "injection", value: "POST /api/orders" }),
          envelope({ id: "E2", defect_class: "injection", value: "POST /api/orders" }),
        ],
        ledger,
        options,
      );
      expect(card.matched.map((hit) => hit.defect_id)).toEqual(["INJ"]);
      expect(card.duplicate_findings.map((finding) => finding.defect_id)).toEqual(["INJ"]);
      expect(card.missed.map((missed) => missed.id)).toEqual(["AUTHZ"]);
    });
  });

  it("records a false positive with the not_defect it matched, and lists unlisted findings", () => {
    const ledger = ledgerOf(
      [defect("D1", [at("GET /api/invoices/{id}")])],
      [
        notDefect("N1", [at("GET /api/plans")]),
        notDefect("N2", [{ kind: "table", value: "audit_log" }], "data"),
      ],
    );
    const card = score(
      [
        envelope({ id: "E1", defect_class: "missing-authentication", value: "GET /api/plans/" }),
        envelope({
          id: "E2",
          domain: "data",
          defect_class: "missing-constraint",
          kind: "table",
          value: "audit_log.at",
        }),
        envelope({ id: "E3", value: "GET /api/unknown" }),
        envelope({ id: "E4", value: "GET /api/invoices/5" }),
      ],
      ledger,
      options,
    );
    expect(card.false_positives.map((finding) => [finding.envelope_id, finding.not_defect])).toEqual([
      ["E1", "N1"],
      ["E2", "N2"],
    ]);
    expect(card.unlisted).toEqual([
      {
        envelope_id: "E3",
        title: "finding E3",
        domain: "security",
        defect_class: "missing-authorization",
        severity: "high",
        location: { kind: "endpoint", value: "GET /api/unknown" },
      },
    ]);
    expect(card.precision).toBe(0.25);
    expect(card.recall).toBe(1);
  });

  it("leaves fixed defects out of recall and ignores findings that hit them", () => {
    const ledger = ledgerOf([
      defect("OPEN", [at("GET /api/a")]),
      defect("FIXED", [at("GET /api/b")], { fixed_in: "abc123" }),
    ]);
    const card = score([envelope({ id: "E1", value: "GET /api/b" })], ledger, options);
    expect(card).toMatchObject({
      defects: 1,
      fixed_defects: 1,
      recall: 0,
      precision: null,
      true_positives: 0,
      unlisted_count: 0,
      false_positive_count: 0,
    });
    expect(card.ignored.map((finding) => [finding.envelope_id, finding.fixed_defect])).toEqual([
      ["E1", "FIXED"],
    ]);
    expect(card.missed.map((missed) => missed.id)).toEqual(["OPEN"]);
  });

  it("ignores envelopes that are not fileable", () => {
    const ledger = ledgerOf([defect("D1", [at("GET /api/a")])]);
    const card = score(
      [
        envelope({ id: "low", value: "GET /api/a", confidence: 0.69 }),
        envelope({ id: "no-evidence", value: "GET /api/a", withEvidence: false }),
        envelope({ id: "flaky", value: "GET /api/a", notReproducible: true }),
        envelope({ id: "noise", value: "GET /api/other", confidence: 0.1 }),
      ],
      ledger,
      options,
    );
    expect(card).toMatchObject({
      findings: 0,
      not_fileable: 4,
      true_positives: 0,
      unlisted_count: 0,
      precision: null,
    });
    const lowered = score([envelope({ id: "low", value: "GET /api/a", confidence: 0.69 })], ledger, {
      threshold: 0.5,
    });
    expect(lowered.true_positives).toBe(1);
  });

  it("computes class and severity agreement, cost per accepted and per-domain numbers", () => {
    const ledger = ledgerOf(
      [
        defect("S1", [at("GET /api/a")]),
        defect("S2", [at("GET /api/b")], { severity: "critical" }),
        defect("S3", [at("GET /api/c")]),
        defect("D1", [{ kind: "table", value: "users" }], { domain: "data", class: "missing-constraint" }),
        defect("P1", [at("GET /api/list")], {
          domain: "performance",
          class: "unbounded-result",
          fixed_in: "v2",
        }),
      ],
      [notDefect("N1", [at("GET /api/public")])],
    );
    const card = score(
      [
        envelope({ id: "E1", value: "GET /api/a" }),
        envelope({ id: "E2", value: "GET /api/b", defect_class: "missing-authentication", severity: "high" }),
        envelope({ id: "E3", value: "GET /api/public" }),
        envelope({
          id: "E4",
          domain: "data",
          defect_class: "data-integrity",
          kind: "table",
          value: "users.email",
          severity: "low",
        }),
        envelope({ id: "E5", domain: "ui", defect_class: "broken-link", kind: "page", value: "/nowhere" }),
      ],
      ledger,
      { threshold: 0.7, costUsd: 1.5 },
    );
    expect(card).toMatchObject({
      defects: 4,
      true_positives: 3,
      recall: 0.75,
      precision: 0.6,
      class_agreement: 1 / 3,
      severity_agreement: 1 / 3,
      cost_usd: 1.5,
      cost_per_accepted_usd: 0.5,
      duplicates: 0,
    });
    expect(card.by_domain).toEqual({
      security: {
        recall: 2 / 3,
        precision: 2 / 3,
        defects: 3,
        true_positives: 2,
        false_positives: 1,
        unlisted: 0,
      },
      data: { recall: 1, precision: 1, defects: 1, true_positives: 1, false_positives: 0, unlisted: 0 },
      performance: {
        recall: null,
        precision: null,
        defects: 0,
        true_positives: 0,
        false_positives: 0,
        unlisted: 0,
      },
      ui: { recall: null, precision: 0, defects: 0, true_positives: 0, false_positives: 0, unlisted: 1 },
    });
    expect(card.missed.map((missed) => missed.id)).toEqual(["S3"]);
  });

  it("reports undefined ratios as null, including cost per accepted with no true positive", () => {
    const card = score([], ledgerOf([]), { threshold: 0.7, costUsd: 2 });
    expect(card).toMatchObject({
      recall: null,
      precision: null,
      duplicates: null,
      class_agreement: null,
      severity_agreement: null,
      cost_per_accepted_usd: null,
      cost_usd: 2,
      by_domain: {},
    });
    expect(score([], ledgerOf([]), options).cost_usd).toBeNull();
  });
});

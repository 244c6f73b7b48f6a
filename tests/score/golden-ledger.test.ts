import path from "node:path";
import { describe, expect, it } from "vitest";
import { QaasError } from "../../src/errors.ts";
import { checkGoldenLedger, loadGoldenLedger } from "../../src/score/golden-ledger.ts";
import { tempDirectory, writeLedger } from "./fixtures.ts";

const VALID = `ledger_version: 1
target: billing
defects:
  - id: BILL-01
    title: Any signed-in user can read another tenant's invoice
    domain: security
    class: missing-authorization
    severity: high
    locations:
      - endpoint: GET /api/invoices/{id}
      - endpoint: GET /api/invoices/{id}/pdf
    fixed_in: null
  - id: BILL-02
    title: Email is not unique
    domain: data
    class: missing-constraint
    severity: medium
    locations:
      - table: users.email
    fixed_in: 4f2a9c1
not_defects:
  - id: BILL-N1
    title: /api/plans is public on purpose
    domain: security
    locations:
      - endpoint: GET /api/plans
    why: the pricing page needs it before sign-in
`;

function refusal(text: string): QaasError {
  const file = writeLedger(text);
  try {
    loadGoldenLedger(file);
  } catch (error) {
    expect(error).toBeInstanceOf(QaasError);
    expect((error as QaasError).code).toBe("LEDGER_INVALID");
    expect((error as QaasError).message).toContain(file);
    return error as QaasError;
  }
  throw new Error("the ledger was accepted");
}

describe("loadGoldenLedger", () => {
  it("reads a valid ledger with its locations, fixed refs and lines", () => {
    const file = writeLedger(VALID);
    const ledger = loadGoldenLedger(file);
    expect(ledger.target).toBe("billing");
    expect(ledger.defects.map((defect) => [defect.id, defect.class, defect.fixed_in, defect.line])).toEqual([
      ["BILL-01", "missing-authorization", null, 4],
      ["BILL-02", "missing-constraint", "4f2a9c1", 13],
    ]);
    expect(ledger.defects[0]!.locations).toEqual([
      { kind: "endpoint", value: "GET /api/invoices/{id}" },
      { kind: "endpoint", value: "GET /api/invoices/{id}/pdf" },
    ]);
    expect(ledger.not_defects).toEqual([
      {
        id: "BILL-N1",
        title: "/api/plans is public on purpose",
        domain: "security",
        locations: [{ kind: "endpoint", value: "GET /api/plans" }],
        why: "the pricing page needs it before sign-in",
        line: 22,
      },
    ]);
  });

  it("keeps an all-digit fixed_in ref as written", () => {
    const ledger = loadGoldenLedger(writeLedger(VALID.replace("fixed_in: 4f2a9c1", "fixed_in: 0012345")));
    expect(ledger.defects[1]!.fixed_in).toBe("0012345");
  });

  it("says the file is missing and to pass --ledger", () => {
    const file = path.join(tempDirectory("missing"), "nope.yaml");
    expect(() => loadGoldenLedger(file)).toThrow(/nope\.yaml does not exist; pass --ledger/);
  });

  it("refuses a wrong ledger_version", () => {
    const error = refusal(VALID.replace("ledger_version: 1", "ledger_version: 2"));
    expect(error.message).toMatch(/line 1, field ledger_version: must be 1/);
  });

  it("names entry id, field and line for each kind of problem, all at once", () => {
    const text = VALID.replace("class: missing-authorization", "class: xss-ish")
      .replace("severity: medium", "severity: urgent")
      .replace("domain: data", "domain: database")
      .replace("      - endpoint: GET /api/invoices/{id}/pdf", "      - endpoint: /api/invoices/{id}/pdf")
      .replace("    why: the pricing page needs it before sign-in\n", "");
    const error = refusal(text);
    const message = error.message;
    expect(message).toContain("(5 problems)");
    expect(message).toMatch(
      /line 7, defects\[0\] "BILL-01", field class: "xss-ish" is not a class of domain "security"/,
    );
    expect(message).toMatch(
      /line 11, defects\[0\] "BILL-01", field locations\[1\]\.endpoint: .* is not "METHOD \/path"/,
    );
    expect(message).toMatch(
      /line 15, defects\[1\] "BILL-02", field domain: unknown domain "database" \(valid: api, /,
    );
    expect(message).toMatch(
      /line 17, defects\[1\] "BILL-02", field severity: "urgent" must be critical \| high/,
    );
    expect(message).toMatch(/line 22, not_defects\[0\] "BILL-N1", field why: is missing/);
  });

  it("refuses a class that belongs to another domain", () => {
    const error = refusal(VALID.replace("class: missing-constraint", "class: injection"));
    expect(error.message).toMatch(
      /defects\[1\] "BILL-02", field class: "injection" is not a class of domain "data"/,
    );
  });

  it("refuses missing and duplicate ids, across defects and not_defects", () => {
    const text = VALID.replace("  - id: BILL-02\n", "  - title2: x\n")
      .replace("    title: Email is not unique\n", "    title: Email is not unique\n")
      .replace("  - id: BILL-N1", "  - id: BILL-01");
    const { problems } = checkGoldenLedger(text, "defects.yaml");
    expect(problems).toContainEqual(
      expect.objectContaining({ entry: "defects[1]", field: "id", message: "is missing", line: 13 }),
    );
    expect(problems).toContainEqual(
      expect.objectContaining({ entry: "defects[1]", field: "title2", line: 13 }),
    );
    expect(problems).toContainEqual(
      expect.objectContaining({
        entry: 'not_defects[0] "BILL-01"',
        field: "id",
        line: 22,
        message: 'duplicate id, already used by defects[0] "BILL-01"; ids are unique',
      }),
    );
  });

  it("refuses locations with zero keys, two keys, an unknown key, or none at all", () => {
    const text = VALID.replace(
      "      - endpoint: GET /api/invoices/{id}\n      - endpoint: GET /api/invoices/{id}/pdf\n",
      "      - {}\n      - endpoint: GET /api/invoices/{id}\n        page: /invoices\n      - route: /api/invoices\n",
    )
      .replace("      - table: users.email\n", "")
      .replace("    locations:\n    fixed_in: 4f2a9c1", "    locations: []\n    fixed_in: 4f2a9c1");
    const { problems } = checkGoldenLedger(text, "defects.yaml");
    const summary = problems.map(
      (problem) => `${problem.line} ${problem.entry} ${problem.field}: ${problem.message}`,
    );
    expect(summary).toEqual([
      '10 defects[0] "BILL-01" locations[0]: a location has exactly one key (one of endpoint, page, table, channel, file, dependency), got 0 keys',
      '11 defects[0] "BILL-01" locations[1]: a location has exactly one key (one of endpoint, page, table, channel, file, dependency), got 2 keys',
      '13 defects[0] "BILL-01" locations[2]: unknown location key "route" (valid: endpoint, page, table, channel, file, dependency)',
      '20 defects[1] "BILL-02" locations: must list one or more locations, each with exactly one key (endpoint, page, table, ...)',
    ]);
  });

  it("refuses malformed dependency, table and page values", () => {
    const text = VALID.replace(
      "      - table: users.email",
      "      - table: db.users.email\n      - dependency: lodash\n      - page: settings",
    );
    const { problems } = checkGoldenLedger(text, "defects.yaml");
    expect(problems.map((problem) => problem.field)).toEqual([
      "locations[0].table",
      "locations[1].dependency",
      "locations[2].page",
    ]);
  });

  it("reports YAML syntax errors with their line", () => {
    const { problems } = checkGoldenLedger(
      "ledger_version: 1\ndefects:\n  - id: [unclosed\n",
      "defects.yaml",
    );
    expect(problems.length).toBeGreaterThan(0);
    expect(problems[0]!.field).toBe("(yaml)");
    expect(problems[0]!.line).toBeGreaterThanOrEqual(3);
  });
});

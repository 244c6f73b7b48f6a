import { describe, expect, it } from "vitest";
import { findingLocations, locationMatches, normalizeFile } from "../../src/score/match-location.ts";
import { envelope } from "./fixtures.ts";

const endpoint = (finding: string, entry: string) =>
  locationMatches({ kind: "endpoint", value: finding }, { kind: "endpoint", value: entry });
const table = (finding: string, entry: string) =>
  locationMatches({ kind: "table", value: finding }, { kind: "table", value: entry });

describe("endpoint and path matching", () => {
  it("matches a concrete path to a template segment by segment", () => {
    expect(endpoint("GET /api/invoices/17", "GET /api/invoices/{id}")).toBe(true);
    expect(endpoint("GET /api/invoices/17/pdf", "GET /api/invoices/{id}/pdf")).toBe(true);
    expect(endpoint("GET /api/invoices/17/pdf", "GET /api/invoices/{id}")).toBe(false);
    expect(endpoint("GET /api/invoices", "GET /api/invoices/{id}")).toBe(false);
    expect(endpoint("GET /api/receipts/17", "GET /api/invoices/{id}")).toBe(false);
  });

  it("treats :id, <id>, <int:id> and {id} as the same template", () => {
    for (const form of ["/api/items/:id", "/api/items/<id>", "/api/items/<int:id>", "/api/items/{itemId}"]) {
      expect(endpoint(`DELETE ${form}`, "DELETE /api/items/{id}")).toBe(true);
      expect(endpoint("DELETE /api/items/42", `DELETE ${form}`)).toBe(true);
    }
  });

  it("upper-cases methods and still requires them to be equal", () => {
    expect(endpoint("get /api/plans", "GET /api/plans")).toBe(true);
    expect(endpoint("POST /api/plans", "GET /api/plans")).toBe(false);
    expect(endpoint("/api/plans", "GET /api/plans")).toBe(false);
  });

  it("ignores trailing slashes, query strings and an origin", () => {
    expect(endpoint("GET /api/plans/", "GET /api/plans")).toBe(true);
    expect(endpoint("GET /api/plans", "GET /api/plans/")).toBe(true);
    expect(endpoint("GET /api/search?q=x&page=2", "GET /api/search")).toBe(true);
    expect(endpoint("GET /api/invoices/9/?download=1", "GET /api/invoices/{id}")).toBe(true);
    expect(endpoint("GET http://127.0.0.1:3000/api/plans", "GET /api/plans")).toBe(true);
  });

  it("compares literal segments exactly and needs a non-empty segment for a template", () => {
    expect(endpoint("GET /api/Plans", "GET /api/plans")).toBe(false);
    expect(endpoint("GET /api/files/report.pdf", "GET /api/files/{name}.pdf")).toBe(true);
    expect(endpoint("GET /api/files/report.csv", "GET /api/files/{name}.pdf")).toBe(false);
    expect(endpoint("GET /", "GET /{id}")).toBe(false);
  });

  it("matches pages and channels as paths, never across kinds", () => {
    const page = (finding: string, entry: string) =>
      locationMatches({ kind: "page", value: finding }, { kind: "page", value: entry });
    expect(page("/settings/billing/", "/settings/billing")).toBe(true);
    expect(page("/projects/7/edit", "/projects/:id/edit")).toBe(true);
    expect(
      locationMatches(
        { kind: "channel", value: "ws://localhost:4000/ws/rooms/3" },
        { kind: "channel", value: "/ws/rooms/{id}" },
      ),
    ).toBe(true);
    expect(
      locationMatches({ kind: "page", value: "/ws/rooms/3" }, { kind: "channel", value: "/ws/rooms/{id}" }),
    ).toBe(false);
  });
});

describe("table matching", () => {
  it("matches a bare table entry from the table or any of its columns", () => {
    expect(table("users", "users")).toBe(true);
    expect(table("users.email", "users")).toBe(true);
    expect(table("Users.Email", "users")).toBe(true);
  });

  it("matches a column entry only from that column", () => {
    expect(table("users.email", "users.email")).toBe(true);
    expect(table("users", "users.email")).toBe(false);
    expect(table("users.name", "users.email")).toBe(false);
    expect(table("user_roles.email", "users")).toBe(false);
  });
});

describe("file and dependency matching", () => {
  it("compares files after stripping ./ and normalising separators", () => {
    const file = (finding: string, entry: string) =>
      locationMatches({ kind: "file", value: finding }, { kind: "file", value: entry });
    expect(file("./src/services/report.ts", "src/services/report.ts")).toBe(true);
    expect(file("src\\services\\report.ts", "src/services/report.ts")).toBe(true);
    expect(file("src/services/report.ts:42", "src/services/report.ts")).toBe(true);
    expect(file("src/services/Report.ts", "src/services/report.ts")).toBe(false);
    expect(file("lib/services/report.ts", "src/services/report.ts")).toBe(false);
    expect(normalizeFile("./src/a/../b.ts")).toBe("src/b.ts");
  });

  it("compares name@version exactly, the name case-insensitively", () => {
    const dependency = (finding: string, entry: string) =>
      locationMatches({ kind: "dependency", value: finding }, { kind: "dependency", value: entry });
    expect(dependency("jsonwebtoken@8.5.0", "jsonwebtoken@8.5.0")).toBe(true);
    expect(dependency("JsonWebToken@8.5.0", "jsonwebtoken@8.5.0")).toBe(true);
    expect(dependency("jsonwebtoken@8.5.1", "jsonwebtoken@8.5.0")).toBe(false);
    expect(dependency("jsonwebtoken", "jsonwebtoken@8.5.0")).toBe(false);
    expect(dependency("@scope/pkg@1.0.0", "@Scope/pkg@1.0.0")).toBe(true);
    expect(dependency("@scope/pkg@1.0.0", "pkg@1.0.0")).toBe(false);
  });
});

describe("findingLocations", () => {
  it("returns the location then every related one as ledger key/value pairs", () => {
    const finding = envelope({
      id: "E1",
      domain: "architecture",
      defect_class: "circular-dependency",
      kind: "file",
      value: "src/a.ts",
      related: [
        { kind: "file", value: "src/b.ts" },
        { kind: "endpoint", value: "GET /x" },
      ],
    });
    expect(findingLocations(finding)).toEqual([
      { kind: "file", value: "src/a.ts" },
      { kind: "file", value: "src/b.ts" },
      { kind: "endpoint", value: "GET /x" },
    ]);
  });
});

import { describe, expect, it } from "vitest";
import type { Operation } from "../../src/map/system-map.ts";
import { isAuthOperation, isSafeWrite, nounOf } from "../../src/probes/api/operation-index.ts";
import { namedLikeAction } from "../../src/probes/auditor/sqli-point.ts";

const operation = (method: string, path: string): Operation => ({
  method,
  path,
  security: "required",
  parameters: [],
  responses: {},
  seen_in: ["openapi"],
  documented: true,
});

describe("writes a probe may send", () => {
  it("never overwrites state shared by every user, only records it can address (and create)", () => {
    expect(isSafeWrite(operation("PUT", "/api/admin/settings"))).toBe(false);
    expect(isSafeWrite(operation("PATCH", "/api/account"))).toBe(false);
    expect(isSafeWrite(operation("DELETE", "/api/items"))).toBe(false);
    expect(isSafeWrite(operation("PUT", "/api/items/{id}"))).toBe(true);
    expect(isSafeWrite(operation("POST", "/api/items"))).toBe(true);
    expect(isSafeWrite(operation("GET", "/api/admin/settings"))).toBe(true);
  });
});

describe("server pages, read by name whatever their extension", () => {
  it("signs out, resets and signs in at logout.php, reset.aspx and login.jsp as at /logout, /reset and /login", () => {
    expect(isSafeWrite(operation("POST", "/logout.php"))).toBe(false);
    expect(isSafeWrite(operation("POST", "/admin/reset.aspx"))).toBe(false);
    expect(isSafeWrite(operation("POST", "/new-ticket.php"))).toBe(true);
    expect(isAuthOperation(operation("POST", "/login.jsp"))).toBe(true);
    expect(isAuthOperation(operation("GET", "/tickets.php"))).toBe(false);
    expect(namedLikeAction("/delete.php")).toBe(true);
    expect(nounOf("Tickets.aspx")).toBe("ticket");
  });
});

describe("GraphQL fields a probe may send", () => {
  const field = (kind: "query" | "mutation", name: string): Operation => ({
    ...operation("POST", "/graphql"),
    graphql: { kind, field: name, arguments: [], selection: "" },
  });

  it("sends reads and creations, never updates, actions or destruction, whatever the schema calls them", () => {
    expect(isSafeWrite(field("query", "pastes"))).toBe(true);
    expect(isSafeWrite(field("mutation", "createPaste"))).toBe(true);
    expect(isSafeWrite(field("mutation", "editPaste"))).toBe(false);
    expect(isSafeWrite(field("mutation", "setRole"))).toBe(false);
    expect(isSafeWrite(field("query", "deleteAllPastes"))).toBe(false);
    expect(isSafeWrite(field("query", "systemUpdate"))).toBe(false);
  });

  it("sends an import of one new thing, never a bulk import that may replace what exists", () => {
    expect(isSafeWrite(field("mutation", "importPaste"))).toBe(true);
    expect(isSafeWrite(field("mutation", "importDatabase"))).toBe(false);
    expect(isSafeWrite(field("mutation", "importUsers"))).toBe(false);
    expect(isSafeWrite(field("mutation", "importBackup"))).toBe(false);
    expect(isSafeWrite(field("mutation", "import"))).toBe(false);
  });
});

import { describe, expect, it } from "vitest";
import type { Operation } from "../../src/map/system-map.ts";
import { mayWiden } from "../../src/probes/auditor/sqli-point.ts";

const operation = (method: string, path: string) => ({ method, path }) as Operation;

describe("mayWiden: where an OR that selects every row cannot write", () => {
  it("widens reads: GETs, and POSTs whose path ends in a search or query", () => {
    expect(mayWiden(operation("GET", "/api/items"))).toBe(true);
    expect(mayWiden(operation("POST", "/api/crm/budgets/search"))).toBe(true);
    expect(mayWiden(operation("POST", "/catalog/_search"))).toBe(true);
    expect(mayWiden(operation("POST", "/reports/query/"))).toBe(true);
    expect(mayWiden(operation("POST", "/stores/{id}/lookup"))).toBe(true);
  });

  it("never widens what may write: other POSTs, PUT/PATCH/DELETE, GETs named like actions", () => {
    expect(mayWiden(operation("POST", "/api/vouchers/redeem"))).toBe(false);
    expect(mayWiden(operation("POST", "/api/search-history"))).toBe(false);
    expect(mayWiden(operation("PUT", "/api/search"))).toBe(false);
    expect(mayWiden(operation("POST", "/api/search/delete"))).toBe(false);
    expect(mayWiden(operation("GET", "/api/orders/cancel"))).toBe(false);
  });
});

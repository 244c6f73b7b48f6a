import { describe, expect, it } from "vitest";
import { idsFor } from "../../src/probes/auditor/xss.ts";

describe("the ids a stored-XSS check puts in a page route", () => {
  it("tries records created under the route's own collection first, whatever else was created before", () => {
    const created = [
      ...Array.from({ length: 12 }, (_, index) => ({ id: `o${index}`, createdAt: "/api/orders" })),
      { id: "b1", createdAt: "/api/crm/bookings" },
      { id: "b2", createdAt: "/api/crm/bookings/" },
    ];
    const ids = idsFor("/api/crm/bookings/{id}/page", created);
    expect(ids.slice(0, 2)).toEqual(["b1", "b2"]);
    expect(ids).toHaveLength(10);
    expect(idsFor("/{id}", created).slice(0, 2)).toEqual(["o0", "o1"]);
  });
});

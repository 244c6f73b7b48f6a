import { describe, expect, it } from "vitest";
import { idsFor, pagesToCheck } from "../../src/probes/auditor/xss.ts";
import { undocumented, undocumentedMap } from "../fixtures/probe-harness.ts";

describe("the ids a stored-XSS check puts in a page route", () => {
  it("tries records created under the route's own collection first, whatever else was created before", () => {
    const created = [
      ...Array.from({ length: 12 }, (_, index) => ({ id: `o${index}`, createdAt: "/api/orders" })),
      { id: "b1", createdAt: "/api/crm/bookings" },
      { id: "b2", createdAt: "/api/crm/bookings/" },
    ];
    const ids = idsFor("/api/crm/bookings/{id}/page", created);
    expect(ids.own).toEqual(["b1", "b2"]);
    expect(ids.others).toHaveLength(8);
    const atRoot = idsFor("/{id}", created);
    expect(atRoot.own).toEqual([]);
    expect(atRoot.others.slice(0, 2)).toEqual(["o0", "o1"]);
    expect(atRoot.others).toHaveLength(10);
  });
});

describe("the pages a stored-XSS check reads", () => {
  it("reaches the page of a record's own collection even when every route is undocumented", () => {
    // An application without a document: dozens of one-parameter routes before the one that shows the record.
    const routes = Array.from({ length: 40 }, (_, index) => undocumented("GET", `/api/things${index}/{id}`));
    const map = undocumentedMap("nodoc", "http://127.0.0.1:1", [
      ...routes,
      undocumented("GET", "/api/notes/{id}/page"),
      undocumented("GET", "/api/notes"),
    ]);
    const created = [
      ...Array.from({ length: 12 }, (_, index) => ({ id: `${index + 100}`, createdAt: "/api/others" })),
      { id: "7", createdAt: "/api/notes" },
    ];
    const pages = pagesToCheck(map, created, 80).map((page) => page.path);
    expect(pages[0]).toBe("/api/notes/7/page");
    // Routes without a parameter come before other records' ids in every route.
    expect(pages[1]).toBe("/api/notes");
    expect(pages).toHaveLength(80);
  });
});

import { describe, expect, it } from "vitest";
import { wayOn } from "../../src/probes/guide/dead-end.ts";
import {
  fillTemplate,
  matchesTemplate,
  mayBeFeaturePage,
  staticRuns,
  templateOf,
} from "../../src/probes/guide/path-templates.ts";
import type { RenderedPage } from "../../src/probes/guide/rendered-page.ts";

// The template arithmetic GUIDE's checks rest on: which concrete paths a template covers, filling it only
// with ids crawled links carry, and which paths are not features a person should find by clicking.

describe("path templates", () => {
  it("matches concrete paths of any parameter syntax, query and trailing slash ignored", () => {
    expect(matchesTemplate("/tasks/{id}/history", "/tasks/42/history?page=2")).toBe(true);
    expect(matchesTemplate("/tasks/:id/history", "/tasks/42/history/")).toBe(true);
    expect(matchesTemplate("/tasks/<int:id>", "/tasks/42/history")).toBe(false);
    expect(matchesTemplate("/tasks/{id}", "/projects/42")).toBe(false);
  });

  it("fills parameters from crawled paths, id-like values first, and never guesses", () => {
    expect(fillTemplate("/tasks/{id}/history", ["/tasks/new", "/tasks/42", "/tasks/43/edit"])).toEqual([
      "/tasks/42/history",
      "/tasks/43/history",
    ]);
    expect(fillTemplate("/orgs/{org}/audit", ["/tasks/42"])).toBeUndefined();
    expect(fillTemplate("/archive", [])).toEqual(["/archive"]);
  });

  it("keeps the literal parts a script would build the path from", () => {
    expect(staticRuns("/tasks/{id}/history")).toEqual(["/tasks/", "/history"]);
    expect(staticRuns("/reports/archive")).toEqual(["/reports/archive"]);
  });

  it("names a concrete path by the map's template, else by its id-like segments", () => {
    expect(templateOf("/receipts/7", ["/receipts/{id}", "/receipts/latest"])).toBe("/receipts/{id}");
    expect(templateOf("/receipts/latest", ["/receipts/{id}", "/receipts/latest"])).toBe("/receipts/latest");
    expect(templateOf("/invoices/2f1c9a7e-0000-4000-8000-000000000000", [])).toBe("/invoices/{id}");
  });

  it("does not treat APIs, sign-in plumbing, health checks, files or email-reached pages as features", () => {
    for (const path of [
      "/api/tasks",
      "/v2/users",
      "/login",
      "/auth/callback",
      "/healthz",
      "/metrics",
      "/robots.txt",
      "/static/app.css",
      "/webhooks/stripe",
      "/reset-password/{token}",
      "/404",
      "/files/report.pdf",
      "/",
    ])
      expect(mayBeFeaturePage(path), path).toBe(false);
    // Words that also name sections of an application are features when their page is a page.
    for (const path of [
      "/tasks/{id}/history",
      "/reports",
      "/settings/billing.html",
      "/events",
      "/media/tasks/report",
      "/files",
    ])
      expect(mayBeFeaturePage(path), path).toBe(true);
  });
});

describe("a way on from a rendered page", () => {
  const bare: RenderedPage = {
    path: "/receipts/7",
    finalPath: "/receipts/7",
    status: 200,
    contentType: "text/html",
    html: true,
    links: ["/receipts/7", "/receipts/7?print=1"],
    detachedLinks: [],
    forms: [],
    navigationLandmarks: 0,
    controls: 0,
    text: "",
    scripts: [],
  };

  it("a link to the page itself is no way on; any other link, form, navigation or control is", () => {
    expect(wayOn(bare)).toBeUndefined();
    expect(wayOn({ ...bare, links: ["/receipts"] })).toBe("a link to /receipts");
    expect(wayOn({ ...bare, forms: [{ action: "/search", method: "GET" }] })).toBe("a form");
    expect(wayOn({ ...bare, navigationLandmarks: 1 })).toBe("a navigation landmark");
    expect(wayOn({ ...bare, controls: 1 })).toBe("a button or clickable control");
  });
});

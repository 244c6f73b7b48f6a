import { describe, expect, it } from "vitest";
import { pagesFor, visitOrder } from "../../src/probes/browser/browse-pages.ts";
import { consoleErrorsOf, errorSignature } from "../../src/probes/browser/console-errors.ts";
import { RISKY_CONTROL } from "../../src/probes/browser/dead-controls.ts";
import { browserTools } from "../../src/tools/servers/browser-server.ts";
import { systemMapFor, undocumented } from "../fixtures/probe-harness.ts";

// The pure decisions around browsing: which pages a role opens, when two console errors are one, which
// controls are never clicked, and what the tool accepts.

describe("pagesFor", () => {
  const map = systemMapFor({
    target: "app",
    baseUrl: "http://app.test",
    document: { openapi: "3.0.0", paths: {} },
    extraOperations: [undocumented("GET", "/projects/{id}", ["crawl"])],
    pages: [
      { path: "/projects/12", links: [], forms: [], roles: ["member"] },
      { path: "/projects/51", links: [], forms: [], roles: ["member"] },
      { path: "/logout", links: [], forms: [], roles: ["member"] },
      { path: "/broken", status: 500, links: [], forms: [], roles: ["member"] },
      { path: "/public", links: [], forms: [], roles: ["anonymous", "member"] },
      { path: "/#/settings", links: [], forms: [] },
      { path: "/#/billing", links: [], forms: [] },
    ],
  });

  it("opens one page per template that the role reached, never sign-out links or failed pages", () => {
    expect(pagesFor(map, "member", "/")).toEqual([
      { path: "/projects/12", template: "/projects/{id}" },
      { path: "/public", template: "/public" },
      { path: "/#/settings", template: "/#/settings" },
      { path: "/#/billing", template: "/#/billing" },
    ]);
    expect(pagesFor(map, "anonymous", "/").map((page) => page.path)).toEqual([
      "/public",
      "/#/settings",
      "/#/billing",
    ]);
  });

  it("opens the pages the crawl got JSON or a file from after the others", () => {
    const mixed = {
      ...map,
      pages: [
        { path: "/api/items", links: [], forms: [], html: false },
        { path: "/public", links: [], forms: [], html: true },
        { path: "/later", links: [], forms: [] },
      ],
    };
    expect(pagesFor(mixed, "member", "/")).toEqual([
      { path: "/public", template: "/public" },
      { path: "/later", template: "/later" },
      { path: "/api/items", template: "/api/items", html: false },
    ]);
  });

  it("falls back to the entry page for a role that reached none", () => {
    const empty = { ...map, pages: [] };
    expect(pagesFor(empty, "member", "/app")).toEqual([{ path: "/app", template: "/app" }]);
  });
});

describe("visitOrder", () => {
  it("opens every template once before opening any as a second role", () => {
    const anonymous = {
      role: "anonymous",
      pages: [
        { path: "/", template: "/" },
        { path: "/help", template: "/help" },
      ],
    };
    const member = {
      role: "member",
      pages: [
        { path: "/", template: "/" },
        { path: "/orders/4", template: "/orders/{id}" },
        { path: "/help", template: "/help" },
      ],
    };
    const admin = { role: "admin", pages: [{ path: "/users", template: "/users" }, ...member.pages] };
    const order = visitOrder([anonymous, member, admin]).map((visit) => `${visit.plan.role} ${visit.path}`);
    expect(order).toEqual([
      "anonymous /",
      "admin /users",
      "anonymous /help",
      "member /orders/4",
      "member /",
      "admin /",
      "member /help",
      "admin /orders/4",
      "admin /help",
    ]);
    // The first look at each template is marked: the time for clicks is shared among those first.
    expect(
      visitOrder([anonymous, member, admin])
        .filter((visit) => visit.first)
        .map((visit) => visit.template),
    ).toEqual(["/", "/users", "/help", "/orders/{id}"]);
  });

  it("takes the roles' pages in turn: a large public area does not hold back a member's own pages", () => {
    const publicPages = Array.from({ length: 20 }, (_, index) => ({
      path: `/articles/${index}`,
      template: `/articles/${index}`,
    }));
    const anonymous = { role: "anonymous", pages: publicPages };
    const member = {
      role: "member",
      pages: [...publicPages.slice(0, 2), { path: "/account/orders", template: "/account/orders" }],
    };
    const order = visitOrder([anonymous, member]).map((visit) => `${visit.plan.role} ${visit.path}`);
    expect(order.indexOf("member /account/orders")).toBeLessThan(4);
    expect(order.filter((visit) => visit.startsWith("member")).length).toBe(3);
  });

  it("opens every role's HTML pages before any role's JSON answers, which are opened only to be skipped", () => {
    const anonymous = {
      role: "anonymous",
      pages: [
        { path: "/", template: "/" },
        { path: "/health", template: "/health", html: false as const },
      ],
    };
    const member = {
      role: "member",
      pages: [
        { path: "/orders/4", template: "/orders/{id}" },
        { path: "/api/me", template: "/api/me", html: false as const },
        { path: "/", template: "/" },
      ],
    };
    expect(visitOrder([anonymous, member]).map((visit) => `${visit.plan.role} ${visit.path}`)).toEqual([
      "anonymous /",
      "member /orders/4",
      "anonymous /health",
      "member /api/me",
      "member /",
    ]);
  });
});

describe("consoleErrorsOf", () => {
  it("leaves out the browser refusing a script whose request failed, not one served with a wrong type", () => {
    const refusal = (url: string) =>
      `Refused to execute script from '${url}' because its MIME type ('application/json') is not executable, and strict MIME type checking is enabled.`;
    const errors = consoleErrorsOf({
      console: [
        { type: "error", text: refusal("http://app.test/js/gone.js") },
        { type: "error", text: refusal("http://app.test/js/served.js") },
      ],
      pageErrors: [],
      network: [
        { method: "GET", url: "http://app.test/js/gone.js", resourceType: "script", status: 404 },
        { method: "GET", url: "http://app.test/js/served.js", resourceType: "script", status: 200 },
      ],
      dialogs: [],
      downloads: [],
    });
    expect(errors.map((error) => error.text)).toEqual([refusal("http://app.test/js/served.js")]);
  });
});

describe("errorSignature", () => {
  it("treats errors differing in numbers, ids and query strings as one", () => {
    const a = errorSignature(
      "Failed to fetch order 123 from https://app.test/api/orders/123?token=abc&t=1700000000",
    );
    const b = errorSignature(
      "Failed to fetch order 98 from https://app.test/api/orders/98?token=zzz&t=1700000555",
    );
    expect(a).toBe(b);
    expect(errorSignature("item 0b4e6f1a-1c2d-4e5f-8a9b-0c1d2e3f4a5b missing")).toBe("item {uuid} missing");
    expect(errorSignature("Cannot read properties of undefined (reading 'theme')")).not.toBe(
      errorSignature("Cannot read properties of undefined (reading 'user')"),
    );
  });
});

describe("controls never clicked", () => {
  it("recognises destructive, sign-out and payment names and leaves ordinary ones", () => {
    for (const name of [
      "Delete project",
      "Log out",
      "Sign out",
      "Pay now",
      "Buy",
      "Cancel subscription",
      "Archive",
      "Reset password",
      "Revoke key",
      "Unsubscribe",
      "Close account",
    ])
      expect(RISKY_CONTROL.test(name), name).toBe(true);
    for (const name of ["Save draft", "Show details", "Next page", "Copy link", "Display options"])
      expect(RISKY_CONTROL.test(name), name).toBe(false);
  });
});

describe("browse_pages input", () => {
  it("accepts a subset of checks and refuses unknown options", () => {
    const tool = browserTools.find((candidate) => candidate.name === "browse_pages");
    expect(
      tool?.input.safeParse({ roles: ["anonymous"], max_pages: 5, checks: ["links", "layout"] }).success,
    ).toBe(true);
    expect(tool?.input.safeParse({ checks: ["everything"] }).success).toBe(false);
    expect(tool?.input.safeParse({ follow_forms: true }).success).toBe(false);
  });
});

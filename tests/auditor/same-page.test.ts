import { describe, expect, it } from "vitest";
import { sameData } from "../../src/probes/auditor/same-data.ts";
import { isHtmlDocument, pageSegments, samePage } from "../../src/probes/auditor/same-page.ts";

function page(user: string, menu: string[], content: string, token = Math.random().toString(36)): string {
  return `<!doctype html><html><head><title>Log</title><meta name="csrf-token" content="${token}"></head>
<body><header><nav>${menu.map((item) => `<a href="/${item}">${item}</a>`).join("")}</nav>
<form method="post" action="/out"><input type="hidden" name="csrf" value="${token}"><span>${user}</span></form></header>
${content}<footer>Shared footer text for every page</footer></body></html>`;
}

const LOG = `<main><h1>Audit log</h1><table><tr><td>2026-01-02</td><td>Maria Ode</td><td>staff.added</td></tr>
<tr><td>2026-01-03</td><td>Sam Lee</td><td>appointment.cancelled</td></tr></table></main>`;

describe("samePage", () => {
  it("sees the same content behind another user's chrome, menu and token", () => {
    const admin = page("Maria Ode", ["desk", "admin", "audit"], LOG);
    const patient = page("Paula Grant", ["my", "profile"], LOG);
    expect(samePage(admin, patient)).toBe(true);
    expect(sameData({ json: undefined, text: admin }, { json: undefined, text: patient })).toBe(true);
  });

  it("tells a refusal page in the same layout from the content", () => {
    const admin = page("Maria Ode", ["admin"], LOG);
    const refused = page(
      "Paula Grant",
      ["my"],
      "<main><h1>Forbidden</h1><p>You may not see this page.</p></main>",
    );
    expect(samePage(admin, refused)).toBe(false);
    expect(sameData({ json: undefined, text: admin }, { json: undefined, text: refused })).toBe(false);
  });

  it("tells another record's page (same headings, other values) apart", () => {
    const one = page(
      "A",
      [],
      "<main><h1>Document</h1><p>Exercise plan</p><div>Raise legs daily, ice after.</div></main>",
    );
    const two = page(
      "A",
      [],
      "<main><h1>Document</h1><p>Deposit receipt</p><div>Paid 20.00 by card.</div></main>",
    );
    expect(samePage(one, two)).toBe(false);
  });

  it("reads the body outside the chrome when the page marks no main", () => {
    const segments = pageSegments(page("Maria", ["x"], "<div><h2>Payments</h2><p>120.00 refund</p></div>"));
    expect(segments).toEqual(["Payments", "120.00 refund"]);
  });

  it("only compares HTML documents this way", () => {
    expect(isHtmlDocument("<!DOCTYPE html><html></html>")).toBe(true);
    expect(isHtmlDocument('{"html": "<b>x</b>"}')).toBe(false);
  });
});

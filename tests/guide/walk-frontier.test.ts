import { describe, expect, it } from "vitest";
import { PAGES_PER_TEMPLATE, QUERIES_PER_PATH, WalkFrontier } from "../../src/probes/guide/walk-frontier.ts";

describe("which links a UI walk opens", () => {
  it("opens a couple of pages per template, not every record's page", () => {
    const frontier = new WalkFrontier(["/orders/{id}", "/orders/{id}/lines"]);
    const opened = ["/orders/1", "/orders/2", "/orders/3", "/orders/4"].filter((link) =>
      frontier.admit(link),
    );
    expect(opened).toEqual(["/orders/1", "/orders/2"].slice(0, PAGES_PER_TEMPLATE));
    // A deeper template is its own: its pages are opened too.
    expect(frontier.admit("/orders/7/lines")).toBe(true);
    // Ids the map does not know are read as ids all the same.
    expect(
      ["/invoices/10", "/invoices/11", "/invoices/12"].filter((link) => frontier.admit(link)),
    ).toHaveLength(PAGES_PER_TEMPLATE);
  });

  it("opens query variants of one path, since a query often selects the content", () => {
    const frontier = new WalkFrontier([]);
    expect(frontier.admit("/help")).toBe(true);
    expect(frontier.admit("/help?topic=billing")).toBe(true);
    expect(frontier.admit("/help?topic=billing#top")).toBe(false);
    expect(frontier.admit("/help?b=2&a=1")).toBe(true);
    expect(frontier.admit("/help?a=1&b=2")).toBe(false);
    const more = Array.from({ length: QUERIES_PER_PATH + 3 }, (_, index) => `/help?topic=t${index}`);
    expect(more.filter((link) => frontier.admit(link))).toHaveLength(QUERIES_PER_PATH - 2);
  });

  it("never opens other origins, sign-out or destructive links", () => {
    const frontier = new WalkFrontier([]);
    expect(frontier.admit("https://elsewhere.example/")).toBe(false);
    expect(frontier.admit("/logout")).toBe(false);
    expect(frontier.admit("/")).toBe(true);
    expect(frontier.admit("/")).toBe(false);
  });
});

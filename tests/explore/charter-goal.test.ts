import { describe, expect, it } from "vitest";
import { parseCharter, wordsOfPath } from "../../src/explore/charter-goal.ts";

// The charter is read for its grammar: a page to reach, quoted texts that must show, a form to complete.

describe("charter goal", () => {
  it("reads a page to reach from words, ignoring the entry page", () => {
    expect(parseCharter("open the entry page and find a way to Settings")).toEqual({
      page: { words: "Settings" },
      texts: [],
    });
    expect(parseCharter("Go to the billing page and look around").page).toEqual({ words: "billing" });
    expect(parseCharter("reach the Team Members screen").page).toEqual({ words: "Team Members" });
  });

  it("reads a path and the quoted texts that must appear", () => {
    expect(parseCharter('check that /reports/monthly shows "Monthly total" and "Export"')).toEqual({
      page: { path: "/reports/monthly" },
      texts: ["Monthly total", "Export"],
    });
  });

  it("reads a form to complete", () => {
    expect(parseCharter("create a new project and check it is listed").form).toEqual({ subject: "project" });
    expect(parseCharter("fill in the feedback form").form).toEqual({ subject: "feedback" });
    expect(parseCharter("open a page at random").form).toBeUndefined();
    // An "open the entry page" before the verb that makes something does not hide it.
    expect(
      parseCharter("open the entry page and find a way to /things/new, then create a new thing").form,
    ).toEqual({
      subject: "thing",
    });
  });

  it("answers an empty goal for a charter with nothing to pursue", () => {
    expect(parseCharter("look around")).toEqual({ texts: [] });
  });

  it("derives words from a path", () => {
    expect(wordsOfPath("/team-settings")).toBe("team settings");
    expect(wordsOfPath("/items/42")).toBeUndefined();
    expect(wordsOfPath("/")).toBeUndefined();
  });
});

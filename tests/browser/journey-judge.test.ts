import { describe, expect, it } from "vitest";
import type { JourneyRecord } from "../../src/probes/browser/form-journey.ts";
import { judgeJourney } from "../../src/probes/browser/journey-judge.ts";

// Where a form journey lands decides little on its own: only a page that is not there is a broken journey.

const landedOn = (status: number, title: string): JourneyRecord => ({
  page: "http://app.test/notes/new",
  formIndex: 0,
  token: "t",
  sent: [{ method: "POST", url: "http://app.test/notes", status: 303 }],
  landed: { url: "http://app.test/notes/done", status, title },
  refused: [],
  textBefore: "New note",
  textAfter: title,
  exceptions: [],
  domChanged: true,
});

describe("judgeJourney on the page a submission lands on", () => {
  it("does not judge a refusal (a spent anti-forgery token, a permission, an unstated rule)", () => {
    for (const status of [400, 401, 403, 419, 422])
      expect(judgeJourney(landedOn(status, `${status} Forbidden`)).kind).toBe("none");
  });

  it("calls a landing on a missing page or a server error a broken journey", () => {
    for (const status of [404, 405, 410, 500, 502])
      expect(judgeJourney(landedOn(status, "Error")).kind).toBe("broken-journey");
    expect(judgeJourney(landedOn(200, "Internal Server Error")).kind).toBe("broken-journey");
    expect(judgeJourney(landedOn(200, "Note saved")).kind).toBe("none");
  });
});

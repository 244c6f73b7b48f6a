import { describe, expect, it } from "vitest";
import { excludedBy, profileEndpoints } from "../../src/probes/http/profile-endpoints.ts";

describe("profile endpoints", () => {
  const matches = profileEndpoints([
    "GET /difficulty/{level}",
    "post /account/sign-out",
    "GET /files/{name}.pdf",
  ]);

  it("matches a template against any value of its parameter, words as well as ids", () => {
    expect(matches("GET", "http://app.test/difficulty/hard")).toBe(true);
    expect(matches("get", "http://app.test/difficulty/17?x=1")).toBe(true);
    expect(matches("GET", "http://app.test/files/report.pdf")).toBe(true);
  });

  it("keeps the method and the number of segments", () => {
    expect(matches("POST", "http://app.test/difficulty/hard")).toBe(false);
    expect(matches("GET", "http://app.test/difficulty/hard/now")).toBe(false);
    expect(matches("GET", "http://app.test/difficulty")).toBe(false);
    expect(matches("POST", "http://app.test/account/sign-out/")).toBe(true);
    expect(matches("GET", "http://app.test/files/report.txt")).toBe(false);
  });

  it("says why a request is refused, and refuses nothing without exclusions", () => {
    expect(excludedBy(undefined)).toBeUndefined();
    expect(excludedBy(["GET /difficulty/{level}"])?.("GET", "http://app.test/difficulty/easy")).toMatch(
      /GET \/difficulty\/easy is excluded by the profile \(api\.exclude\)/,
    );
    expect(excludedBy(["GET /difficulty/{level}"])?.("GET", "http://app.test/")).toBeUndefined();
  });
});

import { describe, expect, it } from "vitest";
import {
  excludedBy,
  forbiddenRequests,
  profileEndpoints,
  resetPaths,
} from "../../src/probes/http/profile-endpoints.ts";
import type { TargetProfile } from "../../src/targets/profile-schema.ts";

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

  it("refuses what the reset command calls on the target, whatever the method", () => {
    const profile = (command: string, exclude: string[] = []) =>
      ({
        environment: { mode: "managed", base_url: "http://127.0.0.1:5013", reset: { command } },
        api: { exclude },
      }) as unknown as Pick<TargetProfile, "api" | "environment">;
    const urlopen = `python3 -c "import urllib.request; urllib.request.urlopen('http://localhost:5013/start_over')"`;
    expect(resetPaths(profile(urlopen))).toEqual(["/start_over"]);
    const refuse = forbiddenRequests(profile(urlopen, ["POST /logout"]));
    expect(refuse("GET", "http://127.0.0.1:5013/start_over")).toMatch(
      /reset command calls \(environment\.reset\)/,
    );
    expect(refuse("POST", "http://127.0.0.1:5013/start_over/")).toMatch(/reset command/);
    expect(refuse("POST", "http://127.0.0.1:5013/logout")).toMatch(/api\.exclude/);
    expect(refuse("GET", "http://127.0.0.1:5013/pastes")).toBeUndefined();
    // Another service's URL, a command without a URL, and the bare root are not the target's reset.
    expect(resetPaths(profile("curl -X POST http://127.0.0.1:9000/reset"))).toEqual([]);
    expect(resetPaths(profile("sqlite3 app.db < seed.sql"))).toEqual([]);
    expect(resetPaths(profile("curl http://127.0.0.1:5013/"))).toEqual([]);
    // Without a reset URL or exclusions, only routes named like a rebuild of the data are refused.
    const bare = forbiddenRequests(profile("make reset"));
    expect(bare("GET", "http://127.0.0.1:5013/pastes")).toBeUndefined();
    expect(bare("GET", "http://127.0.0.1:5013/admin/createdb")).toMatch(/resets the application's data/);
  });
});

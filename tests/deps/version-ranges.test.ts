import { describe, expect, it } from "vitest";
import { inRange, matchAdvisory } from "../../src/probes/deps/advisory-match.ts";
import type { SnapshotAdvisory } from "../../src/probes/deps/advisory-snapshot.ts";
import { affectedIntervals } from "../../src/probes/deps/dependency-test.ts";
import { compareVersions, isReadableVersion, npmRange } from "../../src/probes/deps/versions.ts";

function npmAdvisory(vulnerable: string, patched?: string): SnapshotAdvisory {
  return {
    id: "NSWG-ECO-1",
    aliases: [],
    ecosystem: "npm",
    package: "pkg",
    source: "test",
    vulnerable,
    ...(patched ? { patched } : {}),
  };
}

function osvAdvisory(
  ecosystem: "npm" | "PyPI",
  ranges: SnapshotAdvisory["ranges"],
  extra: Partial<SnapshotAdvisory> = {},
): SnapshotAdvisory {
  return { id: "OSV-1", aliases: [], ecosystem, package: "pkg", source: "test", ranges, ...extra };
}

const kinds = (advisory: SnapshotAdvisory, versions: string[]) =>
  versions.map((version) => matchAdvisory(advisory, version).kind);

describe("npm ranges, read by semver", () => {
  it("evaluates || alternatives and gives the lowest patched version above the installed one", () => {
    const advisory = npmAdvisory(">=2.0.0 <2.3.4 || >=3.0.0 <3.0.2", ">=2.3.4 <3.0.0 || >=3.0.2");
    expect(kinds(advisory, ["1.9.9", "2.0.0", "2.3.3", "2.3.4", "2.9.0", "3.0.1", "3.0.2"])).toEqual([
      "unaffected",
      "affected",
      "affected",
      "unaffected",
      "unaffected",
      "affected",
      "unaffected",
    ]);
    expect(matchAdvisory(advisory, "2.1.0")).toEqual({ kind: "affected", fixed: "2.3.4" });
    expect(matchAdvisory(advisory, "3.0.0")).toEqual({ kind: "affected", fixed: "3.0.2" });
    // Without a patched range the fix is the `<` bound of the alternative that matched.
    expect(matchAdvisory(npmAdvisory(">=2.0.0 <2.3.4 || >=3.0.0 <3.0.2"), "3.0.1")).toEqual({
      kind: "affected",
      fixed: "3.0.2",
    });
    // `<=` leaves no known fix.
    expect(matchAdvisory(npmAdvisory("<=1.5.1"), "1.5.1")).toEqual({ kind: "affected" });
  });

  it("counts pre-releases in: a beta of a vulnerable line is vulnerable, a pre-release past the fix is not", () => {
    const advisory = npmAdvisory("<=1.5.1", ">=1.5.2");
    expect(kinds(advisory, ["1.5.1-beta.2", "1.5.1", "1.5.2-rc.1", "1.5.2", "v1.0.0", "=1.5.0"])).toEqual([
      "affected",
      "affected",
      "unaffected",
      "unaffected",
      "affected",
      "affected",
    ]);
    const events = osvAdvisory("npm", [[{ introduced: "2.0.0-alpha.1" }, { fixed: "2.0.0-rc.2" }]]);
    expect(
      kinds(events, ["1.9.0", "2.0.0-alpha.1", "2.0.0-beta.3", "2.0.0-rc.1", "2.0.0-rc.2", "2.0.0"]),
    ).toEqual(["unaffected", "affected", "affected", "affected", "unaffected", "unaffected"]);
  });

  it("refuses a range it cannot read whole, rather than matching what it could read", () => {
    // semver's loose mode would drop `bar` and `>>> 2` silently; the range is refused instead.
    expect(npmRange("<1.0.0 || bar")).toBeUndefined();
    expect(npmRange("<=1.0 >>> 2")).toBeUndefined();
    expect(matchAdvisory(npmAdvisory("<1.0.0 || bar"), "0.5.0")).toEqual({
      kind: "unreadable",
      what: "range",
    });
    expect(matchAdvisory(npmAdvisory("<1.0.0"), "git+https://example.test/x.git")).toEqual({
      kind: "unreadable",
      what: "version",
    });
  });
});

describe("PyPI ranges, read by a PEP 440 implementation", () => {
  it("orders epochs, pre, post, dev and local versions as PEP 440 does", () => {
    const sorted = [
      "1.0.post1",
      "1.0",
      "1.0rc1",
      "1.0a1",
      "1.0.dev3",
      "1.0b2",
      "0.9",
      "1!0.1",
      "1.0+local.1",
    ].sort((a, b) => compareVersions("PyPI", a, b)!);
    expect(sorted).toEqual([
      "0.9",
      "1.0.dev3",
      "1.0a1",
      "1.0b2",
      "1.0rc1",
      "1.0",
      "1.0+local.1",
      "1.0.post1",
      "1!0.1",
    ]);
    expect(compareVersions("PyPI", "3.2", "3.2.0")).toBe(0);
    expect(compareVersions("PyPI", "1.0-1", "1.0.post1")).toBe(0);
    expect(isReadableVersion("PyPI", "2019-09-12")).toBe(false);
  });

  it("evaluates OSV events with epochs, post and dev releases", () => {
    const epoch = osvAdvisory("PyPI", [[{ introduced: "0" }, { fixed: "1!1.0" }]]);
    expect(kinds(epoch, ["2024.1", "1!0.5", "1!1.0", "1!1.1"])).toEqual([
      "affected",
      "affected",
      "unaffected",
      "unaffected",
    ]);
    const post = osvAdvisory("PyPI", [[{ introduced: "1.0" }, { fixed: "1.0.post1" }]]);
    expect(kinds(post, ["1.0.dev1", "1.0", "1.0.post0", "1.0.post1", "1.0.post2"])).toEqual([
      "unaffected",
      "affected",
      "affected",
      "unaffected",
      "unaffected",
    ]);
    const dev = osvAdvisory("PyPI", [[{ introduced: "0" }, { fixed: "2.0" }]]);
    expect(kinds(dev, ["2.0.dev1", "2.0rc1", "2.0", "2.0.post1"])).toEqual([
      "affected",
      "affected",
      "unaffected",
      "unaffected",
    ]);
  });

  it("finds the fix of the span holding the version; last_affected closes a span inclusively", () => {
    const events = [
      { introduced: "0" },
      { fixed: "2.3.8" },
      { introduced: "3.0.0" },
      { last_affected: "3.0.4" },
    ];
    expect(inRange("PyPI", "2.2.2", events)).toEqual({ affected: true, fixed: "2.3.8" });
    expect(inRange("PyPI", "3.0.4", events)).toEqual({ affected: true });
    expect(inRange("PyPI", "3.0.5", events)).toEqual({ affected: false });
    const twoFixes = osvAdvisory("PyPI", [
      [{ introduced: "0" }, { fixed: "2.2.3" }, { introduced: "2.3.0" }, { fixed: "2.3.8" }],
    ]);
    expect(matchAdvisory(twoFixes, "2.3.1")).toEqual({ kind: "affected", fixed: "2.3.8" });
  });

  it("skips an advisory with an unreadable range instead of clearing or matching the version", () => {
    const advisory = osvAdvisory("PyPI", [
      [{ introduced: "0" }, { fixed: "2019-09-12" }],
      [{ introduced: "5.0" }, { fixed: "5.1" }],
    ]);
    expect(matchAdvisory(advisory, "1.0")).toEqual({ kind: "unreadable", what: "range" });
    // A readable range that matches still counts.
    expect(matchAdvisory(advisory, "5.0.1")).toEqual({ kind: "affected", fixed: "5.1" });
  });

  it("matches exact versions and honours the source's exclusions", () => {
    const listed = osvAdvisory("PyPI", undefined, { versions: ["1.0", "1.1"] });
    expect(kinds(listed, ["1.0.0", "1.1", "1.2"])).toEqual(["affected", "affected", "unaffected"]);
    const excluded = osvAdvisory("npm", [[{ introduced: "1.12.3" }, { fixed: "3.0.0" }]], {
      excludes: ["1.12.4-aem"],
    });
    expect(kinds(excluded, ["1.12.4", "1.12.4-aem"])).toEqual(["affected", "unaffected"]);
  });
});

describe("intervals for the generated lockfile test", () => {
  it("turns npm ranges and OSV events into plain bounds", () => {
    expect(affectedIntervals(npmAdvisory("<3.5.1 || >=4.0.0 <=4.1.2 || >5.0.0 <5.6.1 || 7.0.0"))).toEqual([
      { below: "3.5.1" },
      { atOrAbove: "4.0.0", atOrBelow: "4.1.2" },
      { above: "5.0.0", below: "5.6.1" },
      { atOrAbove: "7.0.0", atOrBelow: "7.0.0" },
    ]);
    expect(
      affectedIntervals(
        osvAdvisory("PyPI", [
          [{ introduced: "0" }, { fixed: "2.3.8" }, { introduced: "3.0.0" }, { last_affected: "3.0.4" }],
        ]),
      ),
    ).toEqual([{ below: "2.3.8" }, { atOrAbove: "3.0.0", atOrBelow: "3.0.4" }]);
  });
});

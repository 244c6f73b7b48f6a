import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import type { AdvisorySnapshot } from "../../src/probes/deps/advisory-snapshot.ts";
import { indexSnapshot, loadSnapshot, writeSnapshot } from "../../src/probes/deps/advisory-snapshot.ts";
import { auditDependencies } from "../../src/probes/deps/audit.ts";
import { snapshotFreshness } from "../../src/probes/deps/snapshot-age.ts";
import { fakeRunContext } from "../support/fake-run-context.ts";

const SNAPSHOT: AdvisorySnapshot = {
  snapshot_version: 2,
  snapshot_date: "2026-02-20",
  sources: [
    {
      name: "fixture-db",
      repository: "https://example.test/fixture-db",
      licence: "CC-BY-4.0",
      commit: "abcdef1234567890abcdef1234567890abcdef12",
      commit_date: "2026-02-15",
      advisories: 5,
      skipped: {},
    },
    { name: "fixture-curated", licence: "MIT", digest: "00", advisories: 1, skipped: {} },
  ],
  advisories: [
    {
      id: "GHSA-aaaa-aaaa-aaaa",
      aliases: ["CVE-2026-0001"],
      ecosystem: "npm",
      package: "left-pad",
      source: "fixture-db",
      title: "Padding overflow",
      severity: "LOW",
      ranges: [[{ introduced: "0" }, { fixed: "1.1.0" }]],
    },
    {
      id: "NSWG-ECO-7",
      aliases: [],
      ecosystem: "npm",
      package: "left-pad",
      source: "fixture-db",
      title: "Remote code execution",
      severity: "CRITICAL",
      vulnerable: ">=1.0.0 <1.3.0",
      patched: ">=1.3.0",
    },
    {
      id: "GHSA-bbbb-bbbb-bbbb",
      aliases: [],
      ecosystem: "npm",
      package: "left-pad",
      source: "fixture-curated",
      title: "Unfixed denial of service",
      ranges: [[{ introduced: "1.0.0" }]],
    },
    {
      id: "GHSA-cccc-cccc-cccc",
      aliases: [],
      ecosystem: "npm",
      package: "deep-dep",
      source: "fixture-db",
      severity: "HIGH",
      ranges: [[{ introduced: "0" }, { fixed: "2.0.0" }]],
    },
    {
      id: "PYSEC-2026-1",
      aliases: [],
      ecosystem: "PyPI",
      package: "odd_versions",
      source: "fixture-db",
      ranges: [[{ introduced: "0" }, { fixed: "2019-09-12" }]],
    },
    {
      id: "PYSEC-2026-2",
      aliases: ["CVE-2026-0002"],
      ecosystem: "PyPI",
      package: "web-kit",
      source: "fixture-db",
      severity: "HIGH",
      cvss: { score: 7.5, vector: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H" },
      ranges: [[{ introduced: "0" }, { fixed: "2.0.post1" }]],
    },
  ],
};

function write(root: string, file: string, content: string): void {
  fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  fs.writeFileSync(path.join(root, file), content);
}

let root: string;
beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-deps-audit-"));
  write(root, "package.json", JSON.stringify({ dependencies: { "left-pad": "1.2.0" } }));
  write(
    root,
    "package-lock.json",
    JSON.stringify({
      lockfileVersion: 3,
      packages: {
        "": { dependencies: { "left-pad": "1.2.0" } },
        "node_modules/left-pad": { version: "1.2.0" },
        "node_modules/deep-dep": { version: "1.0.0", dev: true },
      },
    }),
  );
  write(root, "requirements.txt", "web_kit==2.0\nodd-versions==1.0\n");
});

function audit(now: string, includeTransitive = false) {
  const context = fakeRunContext();
  const result = auditDependencies(context, root, {
    index: indexSnapshot(SNAPSHOT),
    now: new Date(now),
    includeTransitive,
  });
  const byPackage = (value: string) => result.candidates.find((draft) => draft.location.value === value)!;
  const artifact = (draft: EnvelopeDraft) =>
    JSON.parse(
      fs.readFileSync(
        path.join(
          context.artifactsDir,
          draft.evidence.find((item) => item.kind === "artifact")!.uri!.replace(/^artifact:\/\/[^/]+\//, ""),
        ),
        "utf8",
      ),
    );
  return { ...result, byPackage, artifact };
}

describe("the dependency audit reports the advisory data's age", () => {
  it("puts the snapshot date and sources in the answer and in every finding", () => {
    const { stats, candidates, byPackage, artifact } = audit("2026-03-01T12:00:00Z");
    expect(stats).toMatchObject({
      snapshot_date: "2026-02-20",
      data_as_of: "2026-02-15",
      data_age_days: 14,
      sources: [
        { name: "fixture-db", commit: "abcdef1234567890abcdef1234567890abcdef12", as_of: "2026-02-15" },
        { name: "fixture-curated", as_of: "2026-02-20" },
      ],
      notes: ["1 advisory check(s) skipped: a range could not be read by the ecosystem's version library"],
    });
    expect(candidates.length).toBe(3);
    for (const draft of candidates) {
      const note = draft.evidence.find((item) => item.kind === "note")!.description;
      expect(note).toBe(
        "Advisory data: snapshot of 2026-02-20 built from fixture-db@abcdef1 (2026-02-15), fixture-curated (2026-02-20); data as of 2026-02-15 (14 days old).",
      );
      expect(draft.summary).toContain(note);
    }
    expect(artifact(byPackage("left-pad@1.2.0")).snapshot).toMatchObject({
      date: "2026-02-20",
      data_as_of: "2026-02-15",
      age_days: 14,
      stale: false,
    });
  });

  it("adds a note when the data is more than 90 days old", () => {
    const { stats, byPackage } = audit("2026-06-01T00:00:00Z");
    expect(stats.data_age_days).toBe(106);
    expect(stats.notes[0]).toMatch(
      /^The advisory data is 106 days old \(fixture-db as of 2026-02-15\), older than 90 days: vulnerabilities published since are not reported/,
    );
    expect(byPackage("left-pad@1.2.0").summary).toContain(
      "data as of 2026-02-15 (106 days old, older than 90 days: vulnerabilities published since are not reported",
    );
    expect(snapshotFreshness(SNAPSHOT, new Date("2026-05-16T23:00:00Z")).stale).toBe(false);
    expect(snapshotFreshness(SNAPSHOT, new Date("2026-05-17T00:00:00Z")).stale).toBe(true);
  });
});

describe("a vulnerable-dependency finding", () => {
  it("takes the highest severity of the package's advisories and lists their ids and the version to move to", () => {
    const { byPackage, artifact } = audit("2026-03-01T00:00:00Z");
    const leftPad = byPackage("left-pad@1.2.0");
    // LOW (fixed 1.1.0, not matching 1.2.0), CRITICAL and an unrated one: the worst matching rating wins.
    expect(leftPad.severity).toBe("critical");
    expect(leftPad.title).toBe(
      "left-pad@1.2.0 has 2 known vulnerabilities (NSWG-ECO-7, GHSA-bbbb-bbbb-bbbb)",
    );
    expect(leftPad.summary).toContain("NSWG-ECO-7 [critical]: Remote code execution, fixed in 1.3.0");
    expect(leftPad.summary).toContain(
      "GHSA-bbbb-bbbb-bbbb: Unfixed denial of service, no fixed version published",
    );
    expect(leftPad.impact).toContain(
      "Upgrade to 1.3.0 or later (no fixed version is published for GHSA-bbbb-bbbb-bbbb)",
    );
    expect(artifact(leftPad)).toMatchObject({
      severity: "critical",
      upgrade_to: "1.3.0",
      unfixed: ["GHSA-bbbb-bbbb-bbbb"],
      advisories: [
        {
          id: "NSWG-ECO-7",
          severity: "CRITICAL",
          fixed_in: "1.3.0",
          source: "fixture-db",
          url: "https://github.com/nodejs/security-wg/blob/main/vuln/npm/7.json",
          affected: { vulnerable: ">=1.0.0 <1.3.0", patched: ">=1.3.0" },
        },
        { id: "GHSA-bbbb-bbbb-bbbb", severity: null, fixed_in: null, source: "fixture-curated" },
      ],
    });
    const webKit = byPackage("web-kit@2.0");
    expect(webKit).toMatchObject({ severity: "high", confidence: 0.9 });
    expect(artifact(webKit)).toMatchObject({
      upgrade_to: "2.0.post1",
      advisories: [{ cvss: { score: 7.5 } }],
    });
  });

  it("keeps today's confidence rules: direct 0.9, transitive or dev-only held at 0.6 unless asked for", () => {
    expect(audit("2026-03-01T00:00:00Z").byPackage("deep-dep@1.0.0")).toMatchObject({
      severity: "high",
      confidence: 0.6,
      autonomy_eligible: false,
    });
    expect(audit("2026-03-01T00:00:00Z", true).byPackage("deep-dep@1.0.0").confidence).toBe(0.8);
    expect(audit("2026-03-01T00:00:00Z", true).byPackage("left-pad@1.2.0").confidence).toBe(0.9);
  });

  it("never matches through a range it could not read: it is counted instead", () => {
    const { stats, candidates } = audit("2026-03-01T00:00:00Z");
    expect(candidates.map((draft) => draft.location.value)).not.toContain("odd-versions@1.0");
    expect(stats.skipped).toEqual({ unreadable_ranges: 1, unreadable_versions: 0 });
  });
});

describe("the snapshot file", () => {
  it("round-trips as JSON Lines, and an earlier single-document snapshot still loads", () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-snapshot-file-"));
    const file = path.join(folder, "snapshot.jsonl");
    writeSnapshot(file, SNAPSHOT);
    expect(loadSnapshot(file).snapshot).toEqual(SNAPSHOT);
    expect(
      loadSnapshot(file)
        .byPackage.get("npm:left-pad")
        ?.map((advisory) => advisory.id),
    ).toEqual(["GHSA-aaaa-aaaa-aaaa", "NSWG-ECO-7", "GHSA-bbbb-bbbb-bbbb"]);
    const legacy = path.join(folder, "osv-snapshot.json");
    fs.writeFileSync(
      legacy,
      JSON.stringify({
        snapshot_version: 1,
        snapshot_date: "2025-01-01",
        source: "hand-picked OSV records",
        advisories: [
          {
            id: "GHSA-dddd-dddd-dddd",
            aliases: ["CVE-2025-1"],
            summary: "Old format",
            affected: [
              {
                package: { ecosystem: "npm", name: "left-pad" },
                ranges: [{ type: "SEMVER", events: [{ introduced: "0" }, { fixed: "1.3.0" }] }],
              },
            ],
            database_specific: { severity: "MODERATE" },
          },
        ],
      }),
    );
    const { snapshot } = loadSnapshot(legacy);
    expect(snapshot).toMatchObject({
      snapshot_date: "2025-01-01",
      sources: [{ name: "hand-picked OSV records" }],
      advisories: [
        { id: "GHSA-dddd-dddd-dddd", package: "left-pad", severity: "MODERATE", title: "Old format" },
      ],
    });
    fs.writeFileSync(
      file,
      '{"snapshot_version":2,"snapshot_date":"2026-01-01","sources":[],"advisories":3}\n{}\n',
    );
    expect(() => loadSnapshot(file)).toThrow(/announces 3 advisories but 1 follow/);
  });
});

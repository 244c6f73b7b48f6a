import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { main } from "../../scripts/advisories/build.ts";
import { matchAdvisory } from "../../src/probes/deps/advisory-match.ts";
import type { AdvisorySnapshot, SnapshotAdvisory } from "../../src/probes/deps/advisory-snapshot.ts";
import { readSnapshot, serializeSnapshot } from "../../src/probes/deps/advisory-snapshot.ts";
import { buildAdvisorySnapshot } from "../../src/probes/deps/snapshot-build.ts";
import { advisorySources, bareClone, COMMIT_DAY, PYPA_FILES } from "./source-fixtures.ts";

const execute = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");

let sources: ReturnType<typeof advisorySources>;
let snapshot: AdvisorySnapshot;

function advisory(id: string, pkg?: string): SnapshotAdvisory {
  const found = snapshot.advisories.find((entry) => entry.id === id && (!pkg || entry.package === pkg));
  if (!found) throw new Error(`no ${id} in ${snapshot.advisories.map((entry) => entry.id).join(", ")}`);
  return found;
}

beforeAll(() => {
  sources = advisorySources();
  snapshot = buildAdvisorySnapshot({
    osv: [sources.curated],
    pypa: [sources.pypa.dir],
    retirejs: [bareClone(sources.retirejs.dir)],
    nodejsSecurityWg: [bareClone(sources.nodejs.dir)],
    date: "2026-03-10",
  });
});

describe("building the snapshot from advisory repositories", () => {
  it("records each source's commit, its day, licence and what was left out", () => {
    expect(snapshot.snapshot_date).toBe("2026-03-10");
    expect(
      snapshot.sources.map((source) => [source.name, source.commit ?? null, source.commit_date ?? null]),
    ).toEqual([
      ["fixture-curated", null, null],
      ["pypa-advisory-database", sources.pypa.commit, COMMIT_DAY],
      ["retirejs", sources.retirejs.commit, COMMIT_DAY],
      ["nodejs-security-wg", sources.nodejs.commit, COMMIT_DAY],
    ]);
    const byName = Object.fromEntries(snapshot.sources.map((source) => [source.name, source]));
    expect(byName["fixture-curated"]!.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(byName["pypa-advisory-database"]!.licence).toMatch(/CC-BY-4\.0/);
    expect(byName["pypa-advisory-database"]!.skipped).toEqual({
      "same_as_fixture-curated": 1,
      unreadable_range: 1,
      no_version_range: 1,
      withdrawn: 1,
    });
    expect(byName.retirejs!.skipped).toEqual({
      end_of_life_notice: 1,
      not_an_npm_package: 2,
    });
    expect(byName["nodejs-security-wg"]!.skipped).toEqual({ unreadable_range: 1, same_as_retirejs: 1 });
    expect(byName["nodejs-security-wg"]!.newest_record).toBe("2019-04-28");
    expect(snapshot.sources.reduce((sum, source) => sum + source.advisories, 0)).toBe(
      snapshot.advisories.length,
    );
  });

  it("keeps the facts: ids, aliases, ranges as published, severity from the rating or the CVSS data, CWE, title", () => {
    expect(snapshot.advisories.map((entry) => `${entry.ecosystem} ${entry.package} ${entry.id}`)).toEqual([
      "PyPI Flask GHSA-562c-5r94-xh97",
      "PyPI Numbers_Pkg PYSEC-2024-1",
      "PyPI werkzeug PYSEC-2023-221",
      "npm bassmaster NSWG-ECO-1",
      "npm dojo CVE-2010-2276",
      "npm dojo RETIREJS-99",
      "npm jquery GHSA-rmxg-73gg-4p98",
      "npm mqtt-packet NSWG-ECO-500",
    ]);
    // The curated record wins over PyPA's copy of the same vulnerability and takes its id as an alias.
    expect(advisory("GHSA-562c-5r94-xh97")).toMatchObject({
      aliases: ["CVE-2018-1000656", "PYSEC-2018-66"],
      severity: "HIGH",
      cwe: ["CWE-20"],
      source: "fixture-curated",
      modified: "2024-09-13",
    });
    // NSWG keeps its npm range strings for semver; its CVSS score gives the rating.
    expect(advisory("NSWG-ECO-1")).toEqual({
      id: "NSWG-ECO-1",
      aliases: ["CVE-2014-7205"],
      ecosystem: "npm",
      package: "bassmaster",
      source: "nodejs-security-wg",
      title: "Arbitrary JavaScript Execution",
      severity: "MODERATE",
      cvss: { score: 6.5, vector: "CVSS:3.0/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:L/A:N" },
      modified: "2016-04-28",
      vulnerable: "<=1.5.1",
      patched: ">=1.5.2",
    });
    // PyPA gives only a vector: the score is computed from it; git ranges are dropped; the product blurb
    // opening the details does not become the title.
    expect(advisory("PYSEC-2023-221")).toMatchObject({
      severity: "CRITICAL",
      cvss: { score: 9.8 },
      ranges: [[{ introduced: "0" }, { fixed: "2.3.8" }, { introduced: "3.0.0" }, { fixed: "3.0.1" }]],
      title:
        "If an upload of a file that starts with CR or LF is followed by megabytes of data, parsing slows down.",
    });
    // YAML read as written: `fixed: 2.10` stays 2.10 (a YAML number would be 2.1).
    expect(advisory("PYSEC-2024-1").ranges![0]).toEqual([{ introduced: "0" }, { fixed: "2.10" }]);
    // RetireJS: atOrAbove/below become introduced/fixed, 999.x means no fix yet, exclusions are kept,
    // end-of-life notices and malformed identifiers are dropped.
    expect(advisory("GHSA-rmxg-73gg-4p98")).toMatchObject({
      aliases: ["CVE-2015-9251", "NSWG-ECO-502"],
      severity: "MODERATE",
      cwe: ["CWE-79"],
      ranges: [
        [{ introduced: "1.4.0" }, { fixed: "1.12.0" }],
        [{ introduced: "1.12.3" }, { fixed: "3.0.0-beta1" }],
      ],
      excludes: ["1.12.4-aem"],
    });
    expect(advisory("CVE-2010-2276").aliases).toEqual([]);
    expect(advisory("RETIREJS-99")).toMatchObject({ severity: "CRITICAL", ranges: [[{ introduced: "0" }]] });
  });

  it("gives the same bytes from a checkout, a bare git directory, and on every run", () => {
    const again = buildAdvisorySnapshot({
      osv: [sources.curated],
      pypa: [bareClone(sources.pypa.dir)],
      retirejs: [sources.retirejs.dir],
      nodejsSecurityWg: [sources.nodejs.dir],
      date: "2026-03-10",
    });
    expect(serializeSnapshot(again)).toBe(serializeSnapshot(snapshot));
    const lines = serializeSnapshot(snapshot).trimEnd().split("\n");
    expect(lines).toHaveLength(snapshot.advisories.length + 1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      snapshot_version: 2,
      advisories: snapshot.advisories.length,
    });
  });

  it("reads an unpacked copy that is not a git repository, recording a digest instead of a commit", () => {
    const plain = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-pypa-plain-"));
    for (const [file, content] of Object.entries(PYPA_FILES)) {
      fs.mkdirSync(path.dirname(path.join(plain, file)), { recursive: true });
      fs.writeFileSync(path.join(plain, file), content);
    }
    const built = buildAdvisorySnapshot({ pypa: [plain], date: "2026-03-10" });
    expect(built.sources[0]).toMatchObject({ name: "pypa-advisory-database", advisories: 3 });
    expect(built.sources[0]!.commit).toBeUndefined();
    expect(built.sources[0]!.digest).toMatch(/^[0-9a-f]{64}$/);
  });

  it("matches through the built records: npm ranges with ||, PyPI epochs and post releases", () => {
    expect(matchAdvisory(advisory("NSWG-ECO-500"), "4.0.5")).toEqual({ kind: "affected", fixed: "4.1.3" });
    expect(matchAdvisory(advisory("NSWG-ECO-500"), "4.1.3")).toEqual({ kind: "unaffected" });
    const numbers = advisory("PYSEC-2024-1");
    expect(
      ["2.9", "2.10", "3.0rc1", "3.0.post2", "3.0.post3", "1!0.5", "1!1.1", "1!1.2"].map(
        (version) => matchAdvisory(numbers, version).kind,
      ),
    ).toEqual([
      "affected",
      "unaffected",
      "affected",
      "affected",
      "unaffected",
      "unaffected",
      "affected",
      "unaffected",
    ]);
    expect(matchAdvisory(advisory("GHSA-rmxg-73gg-4p98"), "1.12.4-aem").kind).toBe("unaffected");
    expect(matchAdvisory(advisory("GHSA-rmxg-73gg-4p98"), "2.2.4")).toEqual({
      kind: "affected",
      fixed: "3.0.0-beta1",
    });
  });

  it("refuses what it cannot use, naming it", () => {
    expect(() => buildAdvisorySnapshot({ date: "2026-03-10" })).toThrow(/no advisory source/);
    expect(() => buildAdvisorySnapshot({ pypa: ["/nonexistent/pypa"], date: "2026-03-10" })).toThrow(
      /--pypa \/nonexistent\/pypa: no such folder/,
    );
    expect(() => buildAdvisorySnapshot({ pypa: [sources.pypa.dir], date: "10/03/2026" })).toThrow(
      /YYYY-MM-DD/,
    );
    expect(() =>
      buildAdvisorySnapshot({ pypa: [sources.pypa.dir, sources.pypa.dir], date: "2026-03-10" }),
    ).toThrow(/given twice/);
  });
});

describe("scripts/advisories/build.ts", () => {
  it("writes the snapshot file, reports per source and needs --date; it runs as a program", async () => {
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "qaas-snapshot-")), "snapshot.jsonl");
    const args = [
      "--osv",
      sources.curated,
      "--pypa",
      sources.pypa.dir,
      "--retirejs",
      sources.retirejs.dir,
      "--nodejs-security-wg",
      sources.nodejs.dir,
      "--out",
      out,
    ];
    const report = await main([...args, "--date", "2026-03-10"]);
    expect(report).toContain(`wrote ${snapshot.advisories.length} advisories (snapshot_date 2026-03-10`);
    expect(report).toContain(`pypa-advisory-database@${sources.pypa.commit.slice(0, 12)}: 2 advisories kept`);
    expect(fs.readFileSync(out, "utf8")).toBe(serializeSnapshot(snapshot));
    expect(readSnapshot(out)).toEqual(snapshot);
    await expect(main(args)).rejects.toThrow(/--date YYYY-MM-DD is required/);
    // As documented: the file runs as a program under tsx.
    const script = path.join(ROOT, "scripts/advisories/build.ts");
    const { stdout } = await execute(
      process.execPath,
      ["--import", "tsx", script, ...args, "--date", "2026-03-11"],
      { cwd: ROOT },
    );
    expect(stdout).toContain("snapshot_date 2026-03-11");
    expect(readSnapshot(out).snapshot_date).toBe("2026-03-11");
  });
});

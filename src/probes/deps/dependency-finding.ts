import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../envelope/envelope-draft.ts";
import { REPRO_TEST_FOLDER } from "../evidence/finding.ts";
import { advisorySeverity } from "../severity.ts";
import type { SnapshotAdvisory } from "./advisory-snapshot.ts";
import type { MatchedAdvisory, VulnerablePackage } from "./audit.ts";
import { affectedIntervals, renderDependencyTest } from "./dependency-test.ts";
import type { SnapshotFreshness } from "./snapshot-age.ts";
import { describeSources, STALE_AFTER_DAYS } from "./snapshot-age.ts";

/** Where a person reads the advisory, for the id schemes whose address is known. */
export function advisoryUrl(id: string): string | undefined {
  if (/^GHSA-/.test(id)) return `https://github.com/advisories/${id}`;
  if (/^(PYSEC|OSV)-/.test(id)) return `https://osv.dev/vulnerability/${id}`;
  if (/^CVE-\d+-\d+$/.test(id)) return `https://nvd.nist.gov/vuln/detail/${id}`;
  const nswg = id.match(/^NSWG-ECO-(\d+)$/);
  if (nswg) return `https://github.com/nodejs/security-wg/blob/main/vuln/npm/${nswg[1]}.json`;
  return undefined;
}

const RANK = { critical: 0, high: 1, medium: 2, low: 3 } as const;
const LISTED_IN_SUMMARY = 8;

function bySeverity(a: MatchedAdvisory, b: MatchedAdvisory): number {
  return (
    RANK[advisorySeverity(a.advisory.severity)] - RANK[advisorySeverity(b.advisory.severity)] ||
    (a.advisory.id < b.advisory.id ? -1 : a.advisory.id > b.advisory.id ? 1 : 0)
  );
}

function affectedAsPublished(advisory: SnapshotAdvisory): Record<string, unknown> {
  if (advisory.vulnerable !== undefined)
    return { vulnerable: advisory.vulnerable, ...(advisory.patched ? { patched: advisory.patched } : {}) };
  return {
    ...(advisory.ranges ? { ranges: advisory.ranges } : {}),
    ...(advisory.versions ? { versions: advisory.versions } : {}),
    ...(advisory.excludes ? { excludes: advisory.excludes } : {}),
  };
}

/** Where the finding's advisories come from and how old they are: on every finding, so the age is never hidden. */
export function dataStatement(freshness: SnapshotFreshness): string {
  const stale = freshness.stale
    ? `, older than ${STALE_AFTER_DAYS} days: vulnerabilities published since are not reported; rebuild the snapshot with scripts/advisories/build.ts`
    : "";
  return `Advisory data: snapshot of ${freshness.snapshot_date} built from ${describeSources(freshness)}; data as of ${freshness.data_as_of} (${freshness.age_days} days old${stale}).`;
}

/** A finding per vulnerable `name@version`: the advisories as an artifact, a failing lockfile test, the data's age. */
export function dependencyFinding(
  context: { putArtifact(name: string, content: string | Uint8Array): string },
  tool: string,
  entry: VulnerablePackage,
  freshness: SnapshotFreshness,
): EnvelopeDraft {
  const { installed, upgrade_to, unfixed, severity } = entry;
  const advisories = [...entry.advisories].sort(bySeverity);
  const ids = advisories.map(({ advisory }) => advisory.id);
  const slug = `${installed.name}-${installed.version}`.replace(/[^A-Za-z0-9.-]+/g, "-");
  const snapshot = {
    date: freshness.snapshot_date,
    data_as_of: freshness.data_as_of,
    age_days: freshness.age_days,
    stale: freshness.stale,
    sources: freshness.sources,
    ...(freshness.note ? { note: freshness.note } : {}),
  };
  const artifact = context.putArtifact(
    `${tool}/${slug}.json`,
    `${JSON.stringify(
      {
        package: installed.name,
        version: installed.version,
        ecosystem: installed.ecosystem,
        lockfile: installed.file,
        direct: installed.direct,
        severity,
        upgrade_to: upgrade_to ?? null,
        unfixed,
        snapshot,
        advisories: advisories.map(({ advisory, fixed }) => ({
          id: advisory.id,
          aliases: advisory.aliases,
          title: advisory.title ?? null,
          severity: advisory.severity ?? null,
          cvss: advisory.cvss ?? null,
          cwe: advisory.cwe ?? [],
          source: advisory.source,
          url: advisoryUrl(advisory.id) ?? null,
          fixed_in: fixed ?? null,
          affected: affectedAsPublished(advisory),
        })),
      },
      null,
      2,
    )}\n`,
  );
  const testPath = `${REPRO_TEST_FOLDER}/vulnerable-${slug}.test.mjs`;
  const testUri = context.putArtifact(
    `${tool}/vulnerable-${slug}.test.mjs`,
    renderDependencyTest({
      lockfile: installed.file,
      ecosystem: installed.ecosystem,
      name: installed.name,
      version: installed.version,
      advisories: ids,
      ranges: advisories.flatMap(({ advisory }) => affectedIntervals(advisory)),
    }),
  );
  const command = `node --test ${testPath}`;
  const listed = advisories.slice(0, LISTED_IN_SUMMARY).map(({ advisory, fixed }) => {
    const names = advisory.aliases.length ? ` (${advisory.aliases.join(", ")})` : "";
    const rating = advisory.severity ? ` [${advisory.severity.toLowerCase()}]` : "";
    return `${advisory.id}${names}${rating}: ${advisory.title ?? "advisory"}${fixed ? `, fixed in ${fixed}` : ", no fixed version published"}`;
  });
  const more =
    advisories.length > LISTED_IN_SUMMARY ? `; and ${advisories.length - LISTED_IN_SUMMARY} more` : "";
  const move = upgrade_to
    ? `Upgrade to ${upgrade_to} or later${unfixed.length ? ` (no fixed version is published for ${unfixed.join(", ")})` : ""}.`
    : "No fixed version is published: replace or isolate the package.";
  const data = dataStatement(freshness);
  return EnvelopeDraftSchema.parse({
    domain: "security",
    defect_class: "vulnerable-dependency",
    title: `${installed.name}@${installed.version} has ${advisories.length} known ${advisories.length === 1 ? "vulnerability" : "vulnerabilities"} (${ids.slice(0, 3).join(", ")}${ids.length > 3 ? ", …" : ""})`,
    summary: `${installed.file} pins ${installed.ecosystem} package ${installed.name}@${installed.version}${installed.direct ? " (a direct dependency)" : " (pulled in by another package)"}, affected by: ${listed.join("; ")}${more}. ${move} ${data}`,
    location: {
      kind: "dependency",
      value: `${installed.name}@${installed.version}`,
      source: { file: installed.file },
    },
    evidence: [
      {
        kind: "artifact",
        description: `lockfile entry and the ${advisories.length} matching advisories (snapshot ${freshness.snapshot_date}, data as of ${freshness.data_as_of})`,
        uri: artifact,
      },
      {
        kind: "failing_test",
        description: `generated node --test file asserting ${installed.file} pins no affected version; artifact ${testUri}`,
        uri: testUri,
        test: { path: testPath, command },
      },
      { kind: "note", description: data },
    ],
    reproduction: {
      steps: [
        `open ${installed.file}`,
        `find ${installed.name} at ${installed.version}`,
        `compare with ${ids.join(", ")}`,
      ],
      test: { path: testPath, command },
    },
    impact: `Known, published vulnerabilities in ${installed.name} apply to this build. ${move}`,
    severity,
    // A transitive pin is real but often unreachable; it is held for a person rather than filed.
    confidence: installed.direct ? 0.9 : 0.6,
    suggested_fix_area: installed.file,
    autonomy_eligible: installed.direct,
  });
}

import path from "node:path";
import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../envelope/envelope-draft.ts";
import type { Severity } from "../../envelope/taxonomy.ts";
import type { RunContext } from "../../tools/context.ts";
import { REPRO_TEST_FOLDER } from "../evidence/finding.ts";
import { advisorySeverity } from "../severity.ts";
import type { AdvisoryIndex } from "./advisory-snapshot.ts";
import { packageKey } from "./advisory-snapshot.ts";
import { renderDependencyTest } from "./dependency-test.ts";
import type { InstalledPackage } from "./lockfiles.ts";
import { findLockfiles, parseLockfile } from "./lockfiles.ts";
import type { OsvAdvisory } from "./osv-match.ts";
import { matchAdvisory, normalizePackageName } from "./osv-match.ts";

export interface VulnerablePackage {
  installed: InstalledPackage;
  advisories: Array<{ advisory: OsvAdvisory; fixed: string | undefined }>;
}

const ORDER: Severity[] = ["low", "medium", "high", "critical"];

/** Installed packages (root and one level of subfolders) matched against the snapshot. */
export function findVulnerable(
  root: string,
  index: AdvisoryIndex,
): { lockfiles: string[]; packages: number; vulnerable: VulnerablePackage[] } {
  const lockfiles = findLockfiles(root);
  const installed = lockfiles.flatMap((file) => parseLockfile(file, root));
  const seen = new Map<string, VulnerablePackage>();
  for (const item of installed) {
    const candidates = index.byPackage.get(packageKey(item.ecosystem, item.name)) ?? [];
    const matches = candidates
      .map((advisory) => ({
        advisory,
        match: matchAdvisory(advisory, item.ecosystem, item.name, item.version),
      }))
      .filter(
        (entry): entry is { advisory: OsvAdvisory; match: { fixed: string | undefined } } =>
          entry.match !== undefined,
      )
      .map(({ advisory, match }) => ({ advisory, fixed: match.fixed }));
    if (matches.length === 0) continue;
    const key = `${item.ecosystem}:${normalizePackageName(item.ecosystem, item.name)}@${item.version}`;
    const known = seen.get(key);
    // The same pin in two lockfiles is one defect; a direct declaration anywhere makes it direct.
    if (known) known.installed = { ...known.installed, direct: known.installed.direct || item.direct };
    else seen.set(key, { installed: item, advisories: matches });
  }
  return {
    lockfiles: lockfiles.map((file) => path.relative(root, file).split(path.sep).join("/")),
    packages: installed.length,
    vulnerable: [...seen.values()],
  };
}

function worst(advisories: VulnerablePackage["advisories"]): Severity {
  return advisories
    .map(({ advisory }) => advisorySeverity(advisory.database_specific?.severity))
    .reduce(
      (current, next) => (ORDER.indexOf(next) > ORDER.indexOf(current) ? next : current),
      "low" as Severity,
    );
}

/** A finding per vulnerable `name@version`, with the advisories as an artifact and a failing lockfile test. */
export function dependencyFinding(
  context: RunContext,
  tool: string,
  entry: VulnerablePackage,
  snapshotDate: string,
): EnvelopeDraft {
  const { installed, advisories } = entry;
  const ids = advisories.map(({ advisory }) => advisory.id);
  const fixedVersions = [
    ...new Set(advisories.map(({ fixed }) => fixed).filter((fixed): fixed is string => fixed !== undefined)),
  ];
  const slug = `${installed.name}-${installed.version}`.replace(/[^A-Za-z0-9.-]+/g, "-");
  const artifact = context.putArtifact(
    `${tool}/${slug}.json`,
    `${JSON.stringify(
      {
        package: installed.name,
        version: installed.version,
        ecosystem: installed.ecosystem,
        lockfile: installed.file,
        direct: installed.direct,
        snapshot_date: snapshotDate,
        advisories: advisories.map(({ advisory, fixed }) => ({
          id: advisory.id,
          aliases: advisory.aliases ?? [],
          summary: advisory.summary,
          severity: advisory.database_specific?.severity ?? null,
          fixed_in: fixed ?? null,
          affected: advisory.affected.filter(
            (affected) =>
              normalizePackageName(installed.ecosystem, affected.package.name) ===
              normalizePackageName(installed.ecosystem, installed.name),
          ),
        })),
      },
      null,
      2,
    )}\n`,
  );
  const ranges = advisories.flatMap(({ advisory }) =>
    advisory.affected
      .filter(
        (affected) =>
          normalizePackageName(installed.ecosystem, affected.package.name) ===
          normalizePackageName(installed.ecosystem, installed.name),
      )
      .flatMap((affected) => affected.ranges ?? [])
      .map((range) => ({
        introduced: range.events.find((event) => event.introduced !== undefined)?.introduced ?? "0",
        fixed: range.events.find((event) => event.fixed !== undefined)?.fixed,
      })),
  );
  const testPath = `${REPRO_TEST_FOLDER}/vulnerable-${slug}.test.mjs`;
  const lockfileFromRoot = installed.file;
  const testUri = context.putArtifact(
    `${tool}/vulnerable-${slug}.test.mjs`,
    renderDependencyTest({
      lockfile: lockfileFromRoot,
      ecosystem: installed.ecosystem,
      name: installed.name,
      version: installed.version,
      advisories: ids,
      ranges,
    }),
  );
  const command = `node --test ${testPath}`;
  const summaries = advisories.map(
    ({ advisory, fixed }) =>
      `${advisory.id}${advisory.aliases?.length ? ` (${advisory.aliases.join(", ")})` : ""}: ${advisory.summary ?? "advisory"}${fixed ? `, fixed in ${fixed}` : ""}`,
  );
  return EnvelopeDraftSchema.parse({
    domain: "security",
    defect_class: "vulnerable-dependency",
    title: `${installed.name}@${installed.version} has ${advisories.length} known ${advisories.length === 1 ? "vulnerability" : "vulnerabilities"} (${ids.slice(0, 3).join(", ")}${ids.length > 3 ? ", …" : ""})`,
    summary: `${installed.file} pins ${installed.ecosystem} package ${installed.name}@${installed.version}${installed.direct ? " (a direct dependency)" : " (pulled in by another package)"}, affected by: ${summaries.join("; ")}. Advisory snapshot of ${snapshotDate}.`,
    location: {
      kind: "dependency",
      value: `${installed.name}@${installed.version}`,
      source: { file: installed.file },
    },
    evidence: [
      {
        kind: "artifact",
        description: `lockfile entry and matching advisories (snapshot ${snapshotDate})`,
        uri: artifact,
      },
      {
        kind: "failing_test",
        description: `generated node --test file asserting ${installed.file} pins no affected version; artifact ${testUri}`,
        uri: testUri,
        test: { path: testPath, command },
      },
    ],
    reproduction: {
      steps: [
        `open ${installed.file}`,
        `find ${installed.name} at ${installed.version}`,
        `compare with ${ids.join(", ")}`,
      ],
      test: { path: testPath, command },
    },
    impact: `Known, published vulnerabilities in ${installed.name} apply to this build${fixedVersions.length ? `; upgrade to ${fixedVersions.join(" / ")} or later` : ""}.`,
    severity: worst(advisories),
    // A transitive pin is real but often unreachable; it is held for a person rather than filed.
    confidence: installed.direct ? 0.9 : 0.6,
    suggested_fix_area: installed.file,
    autonomy_eligible: installed.direct,
  });
}

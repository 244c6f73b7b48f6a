import crypto from "node:crypto";
import type { OsvEvent, SnapshotAdvisory } from "../advisory-snapshot.ts";
import { isReadableVersion, npmVersion } from "../versions.ts";
import { count, type RecordFilter, shortTitle, sortedUnique } from "./osv-record.ts";
import { ratingFromText } from "./rating.ts";
import type { SourceRepository } from "./repository.ts";
import type { SourceReading } from "./types.ts";

export const RETIREJS = {
  name: "retirejs",
  repository: "https://github.com/RetireJS/retire.js",
  licence: "Apache-2.0 (Copyright 2018 Erlend Oftedal; the repository's LICENSE.md and NOTICE.md)",
  file: "repository/jsrepository-master.json",
} as const;

/**
 * Components whose RetireJS name is a valid npm name that is not the component's npm package: the
 * template entry, and Ember.js (published on npm as `ember-source`; `ember` is another package).
 */
const NOT_ON_NPM_UNDER_THIS_NAME = new Set(["retire-example", "ember"]);

/** "Use of unmaintained third-party components": an end-of-life notice, not a vulnerability. */
const END_OF_LIFE_CWE = "CWE-1104";

interface RetireRange {
  atOrAbove?: string;
  below?: string;
  excludes?: string[];
}

interface RetireVulnerability extends RetireRange {
  ranges?: RetireRange[];
  summary?: string;
  severity?: string;
  cwe?: string[];
  identifiers?: { CVE?: string[]; githubID?: string; retid?: string; summary?: string };
}

/** RetireJS writes 999.x (or x.999.999) for "no fixed version yet". */
function isOpenEnded(below: string): boolean {
  const version = npmVersion(below);
  return version !== undefined && (version.major >= 999 || version.minor >= 999);
}

function npmNameOf(component: string, npmname: unknown): string | undefined {
  if (typeof npmname === "string" && npmname) return npmname;
  if (NOT_ON_NPM_UNDER_THIS_NAME.has(component)) return undefined;
  return /^(@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/.test(component) ? component : undefined;
}

/**
 * RetireJS's repository of vulnerable front-end libraries (`repository/jsrepository-master.json`), for
 * the components published on npm. Each `atOrAbove`/`below` pair becomes an OSV `introduced`/`fixed`
 * range; the advisory's id is its GHSA id, else its CVE, else a stable id derived from its content.
 */
export function readRetireJs(repository: SourceRepository, filter: RecordFilter = {}): SourceReading {
  const skipped: Record<string, number> = {};
  const advisories: SnapshotAdvisory[] = [];
  const files = repository.list("repository", [".json"]).filter((file) => file === RETIREJS.file);
  const text = repository.readAll(files).get(RETIREJS.file);
  let components: Record<string, { npmname?: unknown; vulnerabilities?: RetireVulnerability[] }> = {};
  if (text === undefined) count(skipped, "missing_file");
  else {
    try {
      components = JSON.parse(text);
    } catch {
      count(skipped, "unreadable_file");
    }
  }
  for (const [component, entry] of Object.entries(components)) {
    const vulnerabilities = Array.isArray(entry?.vulnerabilities) ? entry.vulnerabilities : [];
    const name = npmNameOf(component, entry?.npmname);
    if (!name || (filter.ecosystems && !filter.ecosystems.has("npm"))) {
      count(skipped, "not_an_npm_package", vulnerabilities.length);
      continue;
    }
    if (filter.packages && !filter.packages.has(name.toLowerCase())) {
      count(skipped, "package_not_wanted", vulnerabilities.length);
      continue;
    }
    for (const vulnerability of vulnerabilities) {
      const cwe = sortedUnique((vulnerability.cwe ?? []).filter((value) => /^CWE-\d+$/.test(value)));
      if (cwe.length > 0 && cwe.every((value) => value === END_OF_LIFE_CWE)) {
        count(skipped, "end_of_life_notice");
        continue;
      }
      const ranges: OsvEvent[][] = [];
      const excludes: string[] = [];
      for (const range of vulnerability.ranges ?? [vulnerability]) {
        const introduced = range.atOrAbove ?? "0";
        const readable = [introduced, range.below].every(
          (version) => version === undefined || version === "0" || isReadableVersion("npm", version),
        );
        if (!readable || range.below === undefined) {
          count(skipped, "unreadable_range");
          continue;
        }
        ranges.push(isOpenEnded(range.below) ? [{ introduced }] : [{ introduced }, { fixed: range.below }]);
        excludes.push(...(range.excludes ?? []).filter((version) => isReadableVersion("npm", version)));
      }
      if (ranges.length === 0) {
        count(skipped, "no_version_range");
        continue;
      }
      const identifiers = vulnerability.identifiers ?? {};
      // Identifiers as the databases spell them; a malformed one (a date in place of a number) is dropped.
      const githubId = /^GHSA(-[0-9a-z]{4}){3}$/.test(identifiers.githubID ?? "")
        ? identifiers.githubID
        : undefined;
      const names = sortedUnique([
        ...(githubId ? [githubId] : []),
        ...(Array.isArray(identifiers.CVE) ? identifiers.CVE : []).filter((cve) =>
          /^CVE-\d{4}-\d{4,}$/.test(cve),
        ),
      ]);
      const fingerprint = crypto
        .createHash("sha256")
        .update(JSON.stringify([name, vulnerability.summary ?? identifiers.summary ?? "", ranges]))
        .digest("hex")
        .slice(0, 10);
      const id =
        githubId ??
        names[0] ??
        (identifiers.retid ? `RETIREJS-${identifiers.retid}` : `RETIREJS-${name}-${fingerprint}`);
      const title = shortTitle(vulnerability.summary ?? identifiers.summary);
      const severity = ratingFromText(vulnerability.severity);
      advisories.push({
        id,
        aliases: sortedUnique(names, id),
        ecosystem: "npm",
        package: name,
        source: RETIREJS.name,
        ...(title ? { title } : {}),
        ...(severity ? { severity } : {}),
        ...(cwe.length ? { cwe } : {}),
        ranges,
        ...(excludes.length ? { excludes: sortedUnique(excludes) } : {}),
      });
    }
  }
  return {
    source: {
      name: RETIREJS.name,
      repository: RETIREJS.repository,
      licence: RETIREJS.licence,
      ...(repository.commit ? { commit: repository.commit, commit_date: repository.commitDate } : {}),
      ...(repository.commit ? {} : { digest: repository.digest(files) }),
      skipped,
    },
    advisories,
  };
}

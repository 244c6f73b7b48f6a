import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

// Small advisory repositories in the real sources' shapes, committed on a fixed day so the snapshot's
// recorded commit dates are known.

export const COMMIT_DAY = "2026-03-04";

function write(root: string, file: string, content: string): void {
  fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  fs.writeFileSync(path.join(root, file), content);
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "fixture",
      GIT_AUTHOR_EMAIL: "fixture@example.test",
      GIT_COMMITTER_NAME: "fixture",
      GIT_COMMITTER_EMAIL: "fixture@example.test",
      GIT_AUTHOR_DATE: `${COMMIT_DAY}T10:00:00Z`,
      GIT_COMMITTER_DATE: `${COMMIT_DAY}T10:00:00Z`,
    },
  })
    .toString("utf8")
    .trim();
}

/** A git repository holding `files`, one commit; answers its folder and HEAD commit. */
export function gitRepository(files: Record<string, string>): { dir: string; commit: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-advisory-source-"));
  for (const [file, content] of Object.entries(files)) write(dir, file, content);
  git(dir, "init", "-q", "-b", "main");
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "advisories");
  return { dir, commit: git(dir, "rev-parse", "HEAD") };
}

/** A bare clone of `dir`, like the mirrors `fetch` brings. */
export function bareClone(dir: string): string {
  const bare = `${fs.mkdtempSync(path.join(os.tmpdir(), "qaas-advisory-bare-"))}/repo`;
  execFileSync("git", ["clone", "-q", "--bare", dir, bare]);
  return bare;
}

const nswg = (record: Record<string, unknown>) =>
  `${JSON.stringify(
    {
      created_at: "2015-10-17",
      author: { name: "someone", website: null, username: null },
      publish_date: "2014-09-27",
      overview: "An overview.",
      recommendation: "Update.",
      references: [],
      coordinating_vendor: null,
      ...record,
    },
    null,
    2,
  )}\n`;

export const NODEJS_SECURITY_WG_FILES: Record<string, string> = {
  "README.md": "# security-wg\n",
  "vuln/npm/1.json": nswg({
    id: 1,
    updated_at: "2016-04-28",
    title: "Arbitrary JavaScript Execution",
    module_name: "bassmaster",
    cves: ["CVE-2014-7205"],
    vulnerable_versions: "<=1.5.1",
    patched_versions: ">=1.5.2",
    cvss_vector: "CVSS:3.0/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:L/A:N",
    cvss_score: 6.5,
  }),
  "vuln/npm/500.json": nswg({
    id: 500,
    updated_at: "2019-04-28",
    title: "Buffer Over-read",
    module_name: "mqtt-packet",
    cves: ["CVE-2019-5432"],
    vulnerable_versions: "<3.5.1 || >=4.0.0 <4.1.3 || >=5.0.0 <5.6.1 || >=6.0.0 <6.1.2",
    patched_versions: ">=3.5.1 <4.0.0 || >=4.1.3 <5.0.0 || >=5.6.1 <6.0.0 || >=6.1.2",
    cvss_vector: "CVSS:3.0/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H",
    cvss_score: 7.5,
  }),
  "vuln/npm/501.json": nswg({
    id: 501,
    updated_at: "2019-05-01",
    title: "Unreadable range",
    module_name: "broken-range",
    cves: [],
    vulnerable_versions: "<=1.0 >>> 2",
    patched_versions: ">=2.0.0",
    cvss_vector: null,
    cvss_score: 5.3,
  }),
  "vuln/npm/502.json": nswg({
    id: 502,
    updated_at: "2018-01-01",
    title: "Cross-site Scripting",
    module_name: "jquery",
    cves: ["CVE-2015-9251"],
    vulnerable_versions: "<3.0.0",
    patched_versions: ">=3.0.0",
    cvss_vector: "CVSS:3.0/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N",
    cvss_score: 6.1,
  }),
  "vuln/npm/index.json": "{}\n",
};

export const PYPA_FILES: Record<string, string> = {
  LICENSE: "Attribution 4.0 International\n",
  "vulns/flask/PYSEC-2018-66.yaml": `id: PYSEC-2018-66
details: 'The Pallets Project flask version Before 0.12.3 contains a CWE-20: Improper
  Input Validation vulnerability in flask that can result in Large amount of memory
  usage possibly leading to denial of service.'
affected:
- package:
    name: flask
    ecosystem: PyPI
    purl: pkg:pypi/flask
  ranges:
  - type: GIT
    repo: https://github.com/pallets/flask
    events:
    - introduced: '0'
    - fixed: 7e1ea4a3c1ab8e8c4aa4e3a6d4f0b0f0e9f0a1b2
  - type: ECOSYSTEM
    events:
    - introduced: '0'
    - fixed: 0.12.3
  versions:
  - '0.12'
  - 0.12.1
  - 0.12.2
references:
- type: ADVISORY
  url: https://github.com/advisories/GHSA-562c-5r94-xh97
aliases:
- CVE-2018-1000656
- GHSA-562c-5r94-xh97
modified: '2021-08-25T04:30:09.712538Z'
published: '2018-08-20T19:31:00Z'
`,
  "vulns/werkzeug/PYSEC-2023-221.yaml": `id: PYSEC-2023-221
details: Werkzeug is a comprehensive WSGI web application library. If an upload of
  a file that starts with CR or LF is followed by megabytes of data, parsing slows down.
affected:
- package:
    name: werkzeug
    ecosystem: PyPI
    purl: pkg:pypi/werkzeug
  ranges:
  - type: ECOSYSTEM
    events:
    - introduced: '0'
    - fixed: 2.3.8
    - introduced: 3.0.0
    - fixed: 3.0.1
aliases:
- CVE-2023-46136
- GHSA-hrfv-mqp8-q5rw
severity:
- type: CVSS_V3
  score: CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H
modified: '2023-11-03T05:39:22.541234Z'
`,
  "vulns/numbers/PYSEC-2024-1.yaml": `id: PYSEC-2024-1
summary: A release line written without quotes
affected:
- package:
    name: Numbers_Pkg
    ecosystem: PyPI
  ranges:
  - type: ECOSYSTEM
    events:
    - introduced: 0
    - fixed: 2.10
  - type: ECOSYSTEM
    events:
    - introduced: 3.0.dev0
    - last_affected: 3.0.post2
  - type: ECOSYSTEM
    events:
    - introduced: 1!1.0
    - fixed: 1!1.2
modified: '2024-01-02T00:00:00Z'
`,
  "vulns/steam/PYSEC-2019-125.yaml": `id: PYSEC-2019-125
details: A date where a version should be.
affected:
- package:
    name: steam
    ecosystem: PyPI
  ranges:
  - type: ECOSYSTEM
    events:
    - introduced: '0'
    - fixed: '2019-09-12'
modified: '2021-01-01T00:00:00Z'
`,
  "vulns/gone/PYSEC-2020-9.yaml": `id: PYSEC-2020-9
details: Withdrawn after review.
withdrawn: '2021-02-02T00:00:00Z'
affected:
- package:
    name: gone
    ecosystem: PyPI
  ranges:
  - type: ECOSYSTEM
    events:
    - introduced: '0'
modified: '2021-02-02T00:00:00Z'
`,
};

export const RETIREJS_FILES: Record<string, string> = {
  "LICENSE.md": "Apache License\n",
  "repository/jsrepository-master.json": `${JSON.stringify(
    {
      "retire-example": {
        vulnerabilities: [{ below: "0.0.2", severity: "low", identifiers: { CVE: ["CVE-XXXX-XXXX"] } }],
      },
      jquery: {
        bowername: ["jquery"],
        npmname: "jquery",
        vulnerabilities: [
          {
            ranges: [
              { atOrAbove: "1.4.0", below: "1.12.0" },
              { atOrAbove: "1.12.3", below: "3.0.0-beta1", excludes: ["1.12.4-aem"] },
            ],
            summary: "3rd party CORS request may execute",
            identifiers: { CVE: ["CVE-2015-9251"], issue: "2432", githubID: "GHSA-rmxg-73gg-4p98" },
            severity: "medium",
            cwe: ["CWE-79"],
            info: ["https://github.com/jquery/jquery/issues/2432"],
          },
          {
            ranges: [{ below: "2.999.999", excludes: ["1.12.4-aem"] }],
            summary: "jQuery 1.x and 2.x are End-of-Life and no longer receiving security updates",
            identifiers: { retid: "73", issue: "162" },
            severity: "low",
            cwe: ["CWE-1104"],
            info: [],
          },
        ],
        extractors: {},
      },
      dojo: {
        vulnerabilities: [
          {
            ranges: [{ atOrAbove: "1.0", below: "1.4.2" }],
            summary: "Cross-site scripting in the test pages",
            identifiers: { CVE: ["CVE-2010-2276", "CVE-2007-01-09"] },
            severity: "high",
            cwe: ["CWE-79"],
          },
          {
            ranges: [{ below: "999.0.0" }],
            summary: "Unpatched prototype pollution",
            identifiers: { retid: "99" },
            severity: "critical",
            cwe: ["CWE-1321"],
          },
        ],
      },
      "jQuery Mobile": { vulnerabilities: [{ below: "1.2.0", severity: "medium", identifiers: {} }] },
    },
    null,
    2,
  )}\n`,
};

/** A hand-kept OSV collection like data/advisories/curated-ghsa.json. */
export const CURATED = {
  name: "fixture-curated",
  repository: "https://github.com/github/advisory-database",
  licence: "CC-BY-4.0",
  records: [
    {
      id: "GHSA-562c-5r94-xh97",
      aliases: ["CVE-2018-1000656"],
      summary: "Flask is vulnerable to Denial of Service via incorrect encoding of JSON data",
      modified: "2024-09-13T15:39:19Z",
      affected: [
        {
          package: { ecosystem: "PyPI", name: "Flask" },
          ranges: [{ type: "ECOSYSTEM", events: [{ introduced: "0" }, { fixed: "0.12.3" }] }],
        },
      ],
      database_specific: { severity: "HIGH", cwe_ids: ["CWE-20"] },
    },
  ],
};

export function advisorySources(): {
  nodejs: { dir: string; commit: string };
  pypa: { dir: string; commit: string };
  retirejs: { dir: string; commit: string };
  curated: string;
} {
  const curatedDir = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-curated-"));
  const curated = path.join(curatedDir, "curated.json");
  fs.writeFileSync(curated, `${JSON.stringify(CURATED, null, 2)}\n`);
  return {
    nodejs: gitRepository(NODEJS_SECURITY_WG_FILES),
    pypa: gitRepository(PYPA_FILES),
    retirejs: gitRepository(RETIREJS_FILES),
    curated,
  };
}

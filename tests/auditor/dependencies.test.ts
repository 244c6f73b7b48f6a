import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { doAdvisoriesRefresh } from "../../src/cli/commands/advisories.ts";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import { inRange } from "../../src/probes/deps/advisory-match.ts";
import { loadSnapshot, readSnapshot } from "../../src/probes/deps/advisory-snapshot.ts";
import { findLockfiles, parseLockfile } from "../../src/probes/deps/lockfiles.ts";
import { compareVersions } from "../../src/probes/deps/versions.ts";
import { TargetProfileSchema } from "../../src/targets/profile-schema.ts";
import { depsTools } from "../../src/tools/servers/deps-server.ts";
import { isOwnAssertion } from "../../src/tools/testing/finding-test.ts";
import { callTool, fakeRunContext } from "../support/fake-run-context.ts";

const execute = promisify(execFile);

function write(root: string, file: string, content: string): void {
  fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  fs.writeFileSync(path.join(root, file), content);
}

/** A target tree with one lockfile of each kind, vulnerable and safe pins side by side. */
function targetTree(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-deps-"));
  write(root, "package.json", JSON.stringify({ dependencies: { lodash: "^4.17.11", express: "4.21.2" } }));
  write(
    root,
    "package-lock.json",
    JSON.stringify({
      lockfileVersion: 3,
      packages: {
        "": { dependencies: { lodash: "^4.17.11", express: "4.21.2" } },
        "node_modules/lodash": { version: "4.17.11" },
        "node_modules/express": { version: "4.21.2" },
        "node_modules/minimist": { version: "1.2.5", dev: true },
        "node_modules/express/node_modules/qs": { version: "6.13.0" },
      },
    }),
  );
  write(
    root,
    "requirements.txt",
    "# pinned\nrequests==2.19.0  # old\nFlask[async]==3.0.3\nDjango==4.2.3 ; python_version >= '3.8'\n-r other.txt\nnumpy>=1.0\n",
  );
  write(
    root,
    "web/package.json",
    JSON.stringify({ dependencies: { "@scope/widget": "1.0.0", marked: "4.0.9" } }),
  );
  write(
    root,
    "web/yarn.lock",
    '# yarn lockfile v1\n\n"@scope/widget@1.0.0":\n  version "1.0.0"\n\nmarked@4.0.9, marked@^4.0.0:\n  version "4.0.9"\n  resolved "https://example.test/marked.tgz"\n',
  );
  write(
    root,
    "svc/pnpm-lock.yaml",
    "lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n      semver:\n        specifier: ^7.5.0\n        version: 7.5.1\npackages:\n  semver@7.5.1:\n    resolution: {integrity: sha512-x}\n  ws@8.17.1:\n    resolution: {integrity: sha512-y}\n",
  );
  write(root, "py/pyproject.toml", '[tool.poetry.dependencies]\npython = "^3.11"\njinja2 = "3.1.2"\n');
  write(
    root,
    "py/poetry.lock",
    '[[package]]\nname = "jinja2"\nversion = "3.1.2"\n\n[[package]]\nname = "markupsafe"\nversion = "2.1.3"\n',
  );
  write(root, "node_modules/ignored/package-lock.json", "{}");
  return root;
}

let root: string;
beforeAll(() => {
  root = targetTree();
});

const compareSemver = (a: string, b: string) => compareVersions("npm", a, b)!;
const comparePep440 = (a: string, b: string) => compareVersions("PyPI", a, b)!;

describe("version ordering and OSV ranges", () => {
  it("orders SemVer with pre-releases and loose forms", () => {
    const sorted = [
      "1.0.0",
      "1.0.0-beta.2",
      "1.0.0-alpha",
      "1.0.0-alpha.1",
      "1.0",
      "v0.9.12",
      "1.0.0-beta.11",
      "1.0.0-rc.1",
    ].sort(compareSemver);
    expect(sorted).toEqual([
      "v0.9.12",
      "1.0.0-alpha",
      "1.0.0-alpha.1",
      "1.0.0-beta.2",
      "1.0.0-beta.11",
      "1.0.0-rc.1",
      "1.0.0",
      "1.0",
    ]);
  });

  it("orders PEP 440 versions: dev < pre < final < post, trailing zeros equal", () => {
    const sorted = ["1.0.post1", "1.0", "1.0rc1", "1.0a1", "1.0.dev3", "1.0b2", "0.9", "1!0.1"].sort(
      comparePep440,
    );
    expect(sorted).toEqual(["0.9", "1.0.dev3", "1.0a1", "1.0b2", "1.0rc1", "1.0", "1.0.post1", "1!0.1"]);
    expect(comparePep440("3.2", "3.2.0")).toBe(0);
  });

  it("evaluates introduced/fixed/last_affected events in version order", () => {
    const events = [
      { introduced: "0" },
      { fixed: "1.2.3" },
      { introduced: "2.0.0" },
      { last_affected: "2.4.0" },
    ];
    expect(
      ["1.2.2", "1.2.3", "1.9.9", "2.0.0", "2.4.0", "2.4.1"].map(
        (version) => inRange("npm", version, events)?.affected,
      ),
    ).toEqual([true, false, false, true, true, false]);
    expect(inRange("PyPI", "4.2.2", [{ introduced: "4.2.0" }, { fixed: "4.2.3" }])).toEqual({
      affected: true,
      fixed: "4.2.3",
    });
    expect(inRange("PyPI", "4.2.3", [{ introduced: "4.2.0" }, { fixed: "4.2.3" }])?.affected).toBe(false);
  });
});

describe("lockfiles", () => {
  it("finds lockfiles in the root and one level down (not in node_modules) and reads each format", () => {
    const files = findLockfiles(root)
      .map((file) => path.relative(root, file))
      .sort();
    expect(files).toEqual([
      "package-lock.json",
      "py/poetry.lock",
      "requirements.txt",
      "svc/pnpm-lock.yaml",
      "web/yarn.lock",
    ]);
    const all = findLockfiles(root).flatMap((file) => parseLockfile(file, root));
    const pins = all
      .map((item) => `${item.file} ${item.name}@${item.version}${item.direct ? " direct" : ""}`)
      .sort();
    expect(pins).toEqual([
      "package-lock.json express@4.21.2 direct",
      "package-lock.json lodash@4.17.11 direct",
      "package-lock.json minimist@1.2.5",
      "package-lock.json qs@6.13.0",
      "py/poetry.lock jinja2@3.1.2 direct",
      "py/poetry.lock markupsafe@2.1.3",
      "requirements.txt django@4.2.3 direct",
      "requirements.txt flask@3.0.3 direct",
      "requirements.txt requests@2.19.0 direct",
      "svc/pnpm-lock.yaml semver@7.5.1 direct",
      "svc/pnpm-lock.yaml ws@8.17.1",
      "web/yarn.lock @scope/widget@1.0.0 direct",
      "web/yarn.lock marked@4.0.9 direct",
    ]);
  });
});

describe("audit_dependencies", () => {
  it("reports each vulnerable name@version with its advisories, holds transitive pins, and leaves fixed versions alone", async () => {
    const context = fakeRunContext({
      target: {
        profile: TargetProfileSchema.parse({
          name: "deps",
          source: { path: "." },
          environment: { mode: "none" },
        }),
        file: path.join(root, "qaas.yaml"),
        root,
        goldenLedger: undefined,
      },
    });
    const result = await callTool(depsTools[0]!, {}, context);
    if (!result.ok) throw new Error(result.error);
    const { candidates, stats } = result.data as {
      candidates: EnvelopeDraft[];
      stats: Record<string, unknown>;
    };
    for (const candidate of candidates) EnvelopeDraftSchema.parse(candidate);
    const reported = candidates.map(
      (draft) => `${draft.location.value} ${draft.severity} ${draft.confidence}`,
    );
    // The curated records keep their findings; the databases add more (django 4.2.3 from PyPA, for one).
    expect(reported).toEqual(
      expect.arrayContaining([
        "jinja2@3.1.2 medium 0.9",
        "lodash@4.17.11 critical 0.9",
        "marked@4.0.9 high 0.9",
        "minimist@1.2.5 critical 0.6",
        "requests@2.19.0 medium 0.9",
        "semver@7.5.1 medium 0.9",
      ]),
    );
    // Versions past every advisory's fix, and a package no advisory names, stay quiet.
    for (const safe of [
      "express@4.21.2",
      "qs@6.13.0",
      "ws@8.17.1",
      "flask@3.0.3",
      "markupsafe@2.1.3",
      "@scope/widget@1.0.0",
    ])
      expect(reported.join("\n")).not.toContain(safe);
    expect(stats.snapshot_date).toBe(loadSnapshot().snapshot.snapshot_date);
    const lodash = candidates.find((draft) => draft.location.value === "lodash@4.17.11")!;
    expect(lodash.summary).toContain("GHSA-jf85-cpcp-j695");
    expect(lodash.location.kind).toBe("dependency");
    // The generated test fails while the lockfile pins the vulnerable version, and passes once upgraded.
    const testUri = lodash.evidence.find((item) => item.kind === "failing_test")!.uri!;
    const testFile = path.join(context.artifactsDir, testUri.replace(/^artifact:\/\/[^/]+\//, ""));
    const failed = await execute(process.execPath, ["--test", testFile], { cwd: root }).then(
      () => "",
      (error: { stdout?: string }) => error.stdout ?? "",
    );
    const message = failed.match(
      /lodash must move past GHSA-jf85-cpcp-j695[^\n']*; the lockfile pins 4\.17\.11/,
    )?.[0];
    expect(message).toBeDefined();
    // The runner sees the test's own assertion (not a broken set-up) and so can call it reproduced.
    expect(isOwnAssertion(message, fs.readFileSync(testFile, "utf8"))).toBe(true);
    // The finding names the version to move to; the same test passes on a lockfile that pins it.
    const artifactUri = lodash.evidence.find((item) => item.kind === "artifact")!.uri!;
    const artifact = JSON.parse(
      fs.readFileSync(
        path.join(context.artifactsDir, artifactUri.replace(/^artifact:\/\/[^/]+\//, "")),
        "utf8",
      ),
    ) as { upgrade_to: string; snapshot: { date: string } };
    expect(artifact.snapshot.date).toBe(loadSnapshot().snapshot.snapshot_date);
    expect(compareVersions("npm", artifact.upgrade_to, "4.17.12")).toBe(1);
    expect(lodash.impact).toContain(`Upgrade to ${artifact.upgrade_to} or later`);
    const upgraded = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-deps-fixed-"));
    write(
      upgraded,
      "package-lock.json",
      JSON.stringify({
        lockfileVersion: 3,
        packages: { "node_modules/lodash": { version: artifact.upgrade_to } },
      }),
    );
    await expect(execute(process.execPath, ["--test", testFile], { cwd: upgraded })).resolves.toBeDefined();
    // Requirements tests parse the text format too.
    const requests = candidates.find((draft) => draft.location.value === "requests@2.19.0")!;
    const requestsTest = path.join(
      context.artifactsDir,
      requests.evidence
        .find((item) => item.kind === "failing_test")!
        .uri!.replace(/^artifact:\/\/[^/]+\//, ""),
    );
    await expect(execute(process.execPath, ["--test", requestsTest], { cwd: root })).rejects.toBeDefined();
  });
});

describe("the advisory snapshot", () => {
  it("ships dated advisories from recorded sources, covering the popular npm and PyPI packages", () => {
    const { snapshot } = loadSnapshot();
    expect(snapshot.snapshot_date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(snapshot.advisories.length).toBeGreaterThanOrEqual(3000);
    expect(snapshot.sources.map((source) => source.name)).toEqual([
      "qaas-curated-ghsa",
      "pypa-advisory-database",
      "retirejs",
      "nodejs-security-wg",
    ]);
    for (const source of snapshot.sources) {
      expect(source.licence, source.name).toMatch(/MIT|Apache-2\.0|CC-BY-4\.0/);
      if (source.name !== "qaas-curated-ghsa") expect(source.commit, source.name).toMatch(/^[0-9a-f]{40}$/);
    }
    const names = new Set(snapshot.advisories.map((advisory) => advisory.package.toLowerCase()));
    for (const name of [
      "lodash",
      "minimist",
      "qs",
      "ws",
      "jsonwebtoken",
      "express",
      "axios",
      "node-fetch",
      "semver",
      "tough-cookie",
      "json5",
      "moment",
      "handlebars",
      "marked",
      "ejs",
      "path-to-regexp",
      "follow-redirects",
      "cookie",
      "body-parser",
      "send",
      "serve-static",
      "sanitize-html",
      "jquery",
      "angular",
      "bootstrap",
      "django",
      "flask",
      "requests",
      "urllib3",
      "jinja2",
      "pyyaml",
      "werkzeug",
      "pillow",
      "cryptography",
    ]) {
      expect(names.has(name), name).toBe(true);
    }
    for (const advisory of snapshot.advisories) {
      expect(advisory.id).toMatch(
        /^(GHSA-[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}|PYSEC-\d{4}-\d+|NSWG-ECO-\d+|CVE-\d{4}-\d+|RETIREJS-.+)$/,
      );
      expect(
        advisory.vulnerable !== undefined || advisory.ranges?.length || advisory.versions?.length,
        advisory.id,
      ).toBeTruthy();
      for (const range of advisory.ranges ?? []) expect(range[0], advisory.id).toHaveProperty("introduced");
    }
  });

  it("qaas advisories refresh rebuilds a snapshot from OSV files in a folder and in a zip", async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-osv-"));
    const record = (id: string, ecosystem: string, name: string, extra: Record<string, unknown> = {}) => ({
      id,
      modified: "2025-01-01T00:00:00Z",
      summary: `${name} advisory`,
      affected: [
        {
          package: { ecosystem, name },
          ranges: [
            { type: "SEMVER", events: [{ introduced: "0" }, { fixed: "2.0.0" }] },
            { type: "GIT", repo: "x", events: [{ introduced: "abc" }] },
          ],
        },
      ],
      database_specific: { severity: "HIGH" },
      ...extra,
    });
    write(
      folder,
      "loose/GHSA-aaaa-bbbb-cccc.json",
      JSON.stringify(record("GHSA-aaaa-bbbb-cccc", "npm", "left-pad")),
    );
    write(
      folder,
      "loose/GHSA-dddd-eeee-ffff.json",
      JSON.stringify(record("GHSA-dddd-eeee-ffff", "npm", "gone", { withdrawn: "2025-02-01T00:00:00Z" })),
    );
    write(folder, "zipped/PYSEC-2025-1.json", JSON.stringify(record("PYSEC-2025-1", "PyPI", "requests")));
    write(
      folder,
      "zipped/RUSTSEC-2025-1.json",
      JSON.stringify(record("RUSTSEC-2025-1", "crates.io", "serde")),
    );
    const zip = path.join(folder, "all.zip");
    await execute("python3", [
      "-c",
      "import sys, zipfile, os\nwith zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:\n  for f in sorted(os.listdir(sys.argv[2])): z.write(os.path.join(sys.argv[2], f), f)",
      zip,
      path.join(folder, "zipped"),
    ]);
    const out = path.join(folder, "snapshot.jsonl");
    const result = await doAdvisoriesRefresh({
      from: [path.join(folder, "loose"), zip],
      out,
      date: "2026-01-02",
      ecosystems: "npm,PyPI",
    });
    expect(result).toMatchObject({
      advisories: 2,
      snapshot_date: "2026-01-02",
      sources: [
        { name: "osv:loose", advisories: 1, skipped: { withdrawn: 1 } },
        { name: "osv:all.zip", advisories: 1, skipped: { other_ecosystem: 1 } },
      ],
    });
    const snapshot = readSnapshot(out);
    expect(snapshot.advisories.map((advisory) => `${advisory.id} ${advisory.package}`)).toEqual([
      "PYSEC-2025-1 requests",
      "GHSA-aaaa-bbbb-cccc left-pad",
    ]);
    // Git ranges name commits, not versions: only the SEMVER range is kept.
    expect(snapshot.advisories[1]!.ranges).toEqual([[{ introduced: "0" }, { fixed: "2.0.0" }]]);
    expect(snapshot.advisories[1]!.severity).toBe("HIGH");
    await expect(
      doAdvisoriesRefresh({ from: [path.join(folder, "zipped")], out, packages: "nothing-here" }),
    ).rejects.toThrow(/no advisory/);
    await expect(
      doAdvisoriesRefresh({ from: [path.join(folder, "zipped")], out, ecosystems: "Go" }),
    ).rejects.toThrow(/not supported/);
  });
});

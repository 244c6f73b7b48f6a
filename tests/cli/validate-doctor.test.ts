import { execFile } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { runDoctor } from "../../src/cli/commands/doctor.ts";
import { SystemMapSchema } from "../../src/map/system-map.ts";
import { SystemMapStore } from "../../src/store/system-map-store.ts";
import { copyShippedConfig, editConfigFile, lineOf } from "../config/config-fixture.ts";
import { captureStdout } from "../fixtures/init-apps/capture-stdout.ts";

// Black-box: the real binary on a temp copy of the shipped configuration with one thing broken.

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const run = promisify(execFile);

async function qaas(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [path.join(REPO, "bin", "qaas.js"), ...args], {
      cwd: REPO,
      env: { ...process.env, NO_COLOR: "1" },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

interface Breakage {
  name: string;
  file: string;
  from: string;
  to: string;
  /** The text on the line the problem must point at. */
  lineText: string;
  field: string;
  message: string | RegExp;
}

const BREAKAGES: Breakage[] = [
  {
    name: "an unknown key in an agent",
    file: "agents/api.yaml",
    from: "max_turns: 40\n",
    to: "max_turns: 40\ncolour: red\n",
    lineText: "colour: red",
    field: "colour",
    message: 'unknown key "colour"',
  },
  {
    name: "a YAML syntax error",
    file: "agents/mapper.yaml",
    from: "must_call: [save_system_map]",
    to: "must_call: [save_system_map\nrequires: []",
    lineText: "requires: []",
    field: "",
    message: /YAML syntax error/,
  },
  {
    name: "a must_call that is not in tools",
    file: "agents/verifier.yaml",
    from: "must_call: [record_verdict]",
    to: "must_call: [record_review]",
    lineText: "must_call: [record_review]",
    field: "must_call[0]",
    message: '"record_review" is not in this agent\'s tools',
  },
  {
    name: "an unknown tool",
    file: "agents/load.yaml",
    from: "  - http_request\n",
    to: "  - htp_request\n",
    lineText: "htp_request",
    field: "tools[7]",
    message: '"htp_request" is not a tool (did you mean "http_request"?)',
  },
  {
    name: "write paths on a non-writer",
    file: "agents/reporter.yaml",
    from: "requires: []",
    to: 'requires: []\npolicy:\n  write_paths: ["reports/**"]',
    lineText: "write_paths",
    field: "policy.write_paths",
    message: "only writers",
  },
  {
    name: "a roster naming a missing agent",
    file: "system.yaml",
    from: "roster: [MAPPER, API, BROWSER, REPRODUCER, TRIAGE]",
    to: "roster: [MAPPER, API, BROWSR, REPRODUCER, TRIAGE]",
    lineText: "BROWSR",
    field: "run_modes.pr-check.roster[2]",
    message: '"BROWSR" is not an agent (did you mean "BROWSER"?)',
  },
  {
    name: "a missing prompt file",
    file: "agents/reviewer.yaml",
    from: "requires: [source, git]",
    to: "requires: [source, git]\nprompt: prompts/NOT_THERE.md",
    lineText: "prompt: prompts/NOT_THERE.md",
    field: "prompt",
    message: /prompt file not found: .*NOT_THERE\.md/,
  },
  {
    name: "a bad seat backend",
    file: "system.yaml",
    from: "  worker:\n    backend: builtin",
    to: "  worker:\n    backend: gpt",
    lineText: "backend: gpt",
    field: "seats.worker.backend",
    message: '"gpt" is not valid',
  },
  {
    name: "a branch pattern matching main",
    file: "agents/fixer.yaml",
    from: 'branch_patterns: ["qaas/fix-*"]',
    to: 'branch_patterns: ["ma*"]',
    lineText: 'branch_patterns: ["ma*"]',
    field: "policy.branch_patterns[0]",
    message: '"ma*" matches "main"',
  },
];

// Every case starts the real binary, all at once: give them the time a loaded machine needs.
describe("qaas validate", { timeout: 180_000 }, () => {
  it.concurrent("passes the shipped configuration", async () => {
    const result = await qaas("validate");
    expect(result.stdout).toContain("configuration is valid (0 errors");
    expect(result.code).toBe(0);
  });

  for (const breakage of BREAKAGES) {
    it.concurrent(`exits 1 and points at the file, line and field for ${breakage.name}`, async () => {
      const dir = copyShippedConfig();
      const file = editConfigFile(dir, breakage.file, breakage.from, breakage.to);
      const result = await qaas("validate", "--config", dir);
      expect(result.code).toBe(1);
      const where = `${path.join(dir, breakage.file)}:${lineOf(file, breakage.lineText)}`;
      const prefix = breakage.field === "" ? `${where}: ` : `${where} ${breakage.field}: `;
      const line = result.stdout.split("\n").find((candidate) => candidate.startsWith(prefix));
      expect(line, result.stdout).toBeDefined();
      if (typeof breakage.message === "string") expect(line).toContain(breakage.message);
      else expect(line).toMatch(breakage.message);
    });
  }

  it.concurrent("prints problems as JSON and exits 0 on warnings alone", async () => {
    const dir = copyShippedConfig();
    editConfigFile(dir, "system.yaml", "  - git merge\n", "");
    editConfigFile(dir, "system.yaml", "  - gh pr merge\n", "");
    editConfigFile(dir, "system.yaml", "  - glab mr merge\n", "");
    const result = await qaas("validate", "--config", dir, "--json");
    expect(result.code).toBe(0);
    const output = JSON.parse(result.stdout) as {
      ok: boolean;
      errors: number;
      problems: Array<Record<string, unknown>>;
    };
    expect(output.ok).toBe(true);
    expect(output.problems).toContainEqual(
      expect.objectContaining({
        path: "forbidden_commands",
        severity: "warning",
        message: expect.stringContaining("merge"),
      }),
    );
  });
});

// Each case runs the real binary, several at once: on a loaded machine that takes far longer than a unit test.
describe("qaas doctor", { timeout: 180_000 }, () => {
  const profile = (root: string) => `name: local
source:
  path: ${root}
environment:
  mode: external
  base_url: http://127.0.0.1:9
api:
  openapi: openapi.yaml
users:
  - name: a
    role: member
    username: a@example.test
    password: secret_ref:QAAS_TEST_DOCTOR_UNSET_A
`;
  const tempHome = () => fs.mkdtempSync(path.join(os.tmpdir(), "qaas-doctor-home-"));
  const rowOf = (stdout: string, agent: string) =>
    stdout.split("\n").find((row) => row.startsWith(`${agent} `));

  it.concurrent("prints which agents can run, what each works from, and why the others cannot", async () => {
    const dir = copyShippedConfig();
    const app = path.join(path.dirname(dir), "app");
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(dir, "targets", "local.yaml"), profile(app));
    const result = await qaas("doctor", "--target", "local", "--config", dir, "--home", tempHome());
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      "working from a static read of the source (no system map saved yet; no requests sent)",
    );
    // The named document is missing and the tree has no routes, but a live app is something to crawl.
    expect(rowOf(result.stdout, "API")).toMatch(
      /^API\s+yes\s+no operations known yet: the map phase crawls http:\/\/127\.0\.0\.1:9 and reads openapi\.yaml$/,
    );
    expect(rowOf(result.stdout, "SOCKET")).toMatch(
      /^SOCKET\s+no\s+no WebSocket channel in the profile, the map or the source: add websocket\.paths$/,
    );
    expect(result.stdout).toContain("note: QAAS_TEST_DOCTOR_UNSET_A is not set");
    // Not in the tree, so (like MAPPER) read from the live app: not by doctor unless --live.
    expect(
      result.stdout.split("\n").filter((line) => line.includes("note: the OpenAPI document openapi.yaml")),
    ).toEqual([
      "note: the OpenAPI document openapi.yaml is served by the app: read when the map phase runs (or pass --live)",
    ]);

    const json = await qaas(
      "doctor",
      "--target",
      path.join(dir, "targets", "local.yaml"),
      "--config",
      dir,
      "--home",
      tempHome(),
      "--json",
    );
    const output = JSON.parse(json.stdout) as {
      agents: Array<{ agent: string; canRun: boolean; reasons: string[]; works_from?: string }>;
      evidence: { operations: { total: number } };
    };
    expect(output.agents).toHaveLength(15);
    expect(output.evidence.operations.total).toBe(0);
    expect(output.agents.find((row) => row.agent === "BROWSER")).toEqual({
      agent: "BROWSER",
      canRun: false,
      reasons: ["no user interface: add ui.entry (the entry page path)"],
    });
  });

  it.concurrent("counts variables the profile's secrets file provides as set", async () => {
    const dir = copyShippedConfig();
    const app = path.join(path.dirname(dir), "app");
    fs.mkdirSync(app);
    fs.writeFileSync(
      path.join(app, "openapi.yaml"),
      "openapi: 3.0.3\ninfo: { title: t, version: '1' }\npaths: {}\n",
    );
    fs.writeFileSync(path.join(dir, "targets", ".env.qaas"), "QAAS_TEST_DOCTOR_UNSET_A=from-file\n");
    const withSecrets = profile(app).replace(
      "  mode: external\n",
      "  mode: external\n  secrets_file: .env.qaas\n",
    );
    fs.writeFileSync(path.join(dir, "targets", "local.yaml"), withSecrets);
    const result = await qaas("doctor", "--target", "local", "--config", dir, "--home", tempHome());
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toContain("note:");
    expect(result.stdout).not.toContain("from-file");
  });

  it.concurrent("fails with the problems of an invalid profile", async () => {
    const dir = copyShippedConfig();
    fs.writeFileSync(
      path.join(dir, "targets", "bad.yaml"),
      "name: bad\nsource: {}\nenvironment:\n  mode: externall\n",
    );
    const result = await qaas("doctor", "--target", "bad", "--config", dir);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /bad\.yaml:4 environment\.mode: "externall" is not valid \(did you mean "external"\?\)/,
    );
    expect(result.stderr).toContain("[TARGET_INVALID]");
  });
});

// The same command in this process, one case at a time: what doctor works from, without a process start each.
describe("qaas doctor, in process", { timeout: 120_000 }, () => {
  const tempHome = () => fs.mkdtempSync(path.join(os.tmpdir(), "qaas-doctor-home-"));
  const rowOf = (stdout: string, agent: string) =>
    stdout.split("\n").find((row) => row.startsWith(`${agent} `));
  const doctor = (options: Parameters<typeof runDoctor>[0]) => captureStdout(() => runDoctor(options));

  it("works from the latest saved system map: inventory sources, socket.io channels, a found database", async () => {
    const dir = copyShippedConfig();
    const app = path.join(path.dirname(dir), "app");
    fs.mkdirSync(app);
    fs.writeFileSync(
      path.join(dir, "targets", "mapped.yaml"),
      `name: mapped\nsource:\n  path: ${app}\nenvironment:\n  mode: external\n  base_url: http://127.0.0.1:9\n`,
    );
    const home = tempHome();
    const operation = (method: string, path: string, seen_in: string[]) => ({
      method,
      path,
      security: "unknown",
      seen_in,
      documented: false,
    });
    const map = {
      map_version: 1,
      target: "mapped",
      created_at: "2026-01-02T03:04:05.000Z",
      commit: null,
      base_url: "http://127.0.0.1:9",
      openapi: { source: "api/openapi.json", version: "3.0.3", document: { openapi: "3.0.3", paths: {} } },
      notes: [
        "the profile names no OpenAPI document (api.openapi); using the file api/openapi.json in the source tree",
      ],
      operations: [
        operation("GET", "/api/items", ["source", "frontend"]),
        operation("POST", "/api/items", ["source"]),
        operation("GET", "/api/stats", ["frontend"]),
      ],
      routes: [],
      pages: [{ path: "/" }],
      channels: [{ path: "/socket.io", seen_in: ["source"], protocol: "socket.io", namespaces: ["/"] }],
      database: {
        kind: "sqlite",
        tables: [
          { name: "items", columns: [] },
          { name: "users", columns: [] },
        ],
        found: { path: "data/app.db", in: "src/db.py:12" },
      },
      ownership: [],
    };
    new SystemMapStore(home).save(SystemMapSchema.parse(map));
    const result = await doctor({ target: "mapped", config: dir, home });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("working from system map v1 (2026-01-02T03:04:05.000Z)");
    expect(rowOf(result.stdout, "API")).toMatch(
      /^API\s+yes\s+3 operations — 0 documented, 2 from source, 2 from the frontend; document api\/openapi\.json \(not in the profile: file api\/openapi\.json in the source tree\)$/,
    );
    expect(rowOf(result.stdout, "SOCKET")).toMatch(
      /^SOCKET\s+yes\s+1 channel \(socket\.io \/socket\.io from source\)$/,
    );
    expect(rowOf(result.stdout, "DBA")).toMatch(
      /^DBA\s+yes\s+sqlite data\/app\.db \(found in src\/db\.py:12, 2 tables\)$/,
    );
  });

  it("reads a document the profile does not name, and asks the live app only with --live", async () => {
    const requests: string[] = [];
    const server = http.createServer((request, response) => {
      requests.push(`${request.method} ${request.url}`);
      if (request.url === "/v3/api-docs") {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(
          JSON.stringify({
            openapi: "3.0.3",
            info: { title: "served", version: "1" },
            paths: { "/things": { get: { responses: { "200": { description: "ok" } } } } },
          }),
        );
        return;
      }
      response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const dir = copyShippedConfig();
      const app = path.join(path.dirname(dir), "app");
      fs.mkdirSync(app);
      fs.writeFileSync(
        path.join(dir, "targets", "found.yaml"),
        `name: found\nsource:\n  path: ${app}\nenvironment:\n  mode: external\n  base_url: ${base}\n`,
      );
      const offline = await doctor({ target: "found", config: dir, home: tempHome() });
      expect(offline.code).toBe(0);
      expect(requests).toEqual([]);
      const live = await doctor({ target: "found", config: dir, home: tempHome(), live: true });
      expect(live.code).toBe(0);
      expect(rowOf(live.stdout, "API")).toContain(
        `1 operation — 1 documented; document ${base}/v3/api-docs (not in the profile: served at /v3/api-docs)`,
      );
      expect(requests.every((request) => request.startsWith("GET "))).toBe(true);
      expect(requests.at(-1)).toBe("GET /v3/api-docs");
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

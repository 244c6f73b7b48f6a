import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.ts";
import { capabilities, type TargetEvidence } from "../../src/targets/capabilities.ts";
import { TargetProfileSchema } from "../../src/targets/profile-schema.ts";
import type { LoadedTarget } from "../../src/tools/context.ts";

function target(profile: unknown, root: string | undefined): LoadedTarget {
  return {
    profile: TargetProfileSchema.parse(profile),
    file: "/profiles/x.yaml",
    root,
    goldenLedger: undefined,
  };
}

const agents = [...loadConfig().agents.values()];

function byAgent(rows: ReturnType<typeof capabilities>): Record<string, string[] | true> {
  return Object.fromEntries(rows.map((row) => [row.agent, row.canRun ? true : row.reasons]));
}

describe("capabilities", () => {
  it("says a static-only target without source can run only the agents that need nothing", () => {
    const rows = byAgent(
      capabilities(
        target(
          { name: "x", source: { git_url: "https://example.test/x.git" }, environment: { mode: "none" } },
          undefined,
        ),
        agents,
      ),
    );
    expect(
      Object.entries(rows)
        .filter(([, value]) => value === true)
        .map(([agent]) => agent)
        .sort(),
    ).toEqual(["MAPPER", "REPORTER", "TRIAGE"]);
    expect(rows.API).toEqual([
      "no running app: set environment.mode (managed, external or compose) and environment.base_url",
      "nothing to work on: no OpenAPI document, no routes in the source, and no running app to crawl: add api.openapi, source.path or environment.base_url",
    ]);
    expect(rows.ARCHITECT).toEqual(["no source code: add source.path (a folder relative to the profile)"]);
  });

  it("says which profile key adds each missing capability for a live target with source", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-capabilities-"));
    const live = target(
      {
        name: "x",
        source: { path: "." },
        environment: { mode: "external", base_url: "http://127.0.0.1:9" },
        api: { openapi: "openapi.yaml" },
        users: [{ name: "a", role: "member", username: "a", password: "secret_ref:A_PASSWORD" }],
      },
      root,
    );
    const rows = byAgent(capabilities(live, agents));
    expect(rows.API).toBe(true);
    expect(rows.AUDITOR).toBe(true);
    expect(rows.BROWSER).toEqual(["no user interface: add ui.entry (the entry page path)"]);
    expect(rows.SOCKET).toEqual([
      "no WebSocket channel in the profile, the map or the source: add websocket.paths",
    ]);
    expect(rows.DBA).toEqual([
      "no database in the profile, the map or the source: add database (kind and path or url)",
    ]);
    expect(rows.FIXER).toEqual([`${root} is not a git repository: run git init there`]);

    fs.mkdirSync(path.join(root, ".git"));
    expect(byAgent(capabilities(live, agents)).FIXER).toBe(true);
  });

  it("needs two users with credential references for the users capability", () => {
    const withUsers = (count: number) =>
      target(
        {
          name: "x",
          source: {},
          environment: { mode: "none" },
          users: Array.from({ length: count }, (_, index) => ({
            name: `u${index}`,
            role: "member",
            password: `secret_ref:U${index}_PASSWORD`,
          })),
        },
        undefined,
      );
    const usersAgent = [
      { ...agents[0]!, config: { ...agents[0]!.config, name: "NEEDS_USERS", requires: ["users" as const] } },
    ];
    expect(capabilities(withUsers(1), usersAgent)[0]).toEqual({
      agent: "NEEDS_USERS",
      canRun: false,
      reasons: [
        "needs two users with credentials for cross-user checks, found 1: add users[] with password or token as secret_ref:NAME",
      ],
    });
    expect(capabilities(withUsers(2), usersAgent)[0]?.canRun).toBe(true);
  });
});

describe("capabilities from what the map or the source holds", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-capabilities-"));
  const bare = (mode: "none" | "external") =>
    target(
      {
        name: "x",
        source: { path: "." },
        environment: mode === "none" ? { mode } : { mode, base_url: "http://127.0.0.1:9" },
      },
      root,
    );
  const evidence = (overrides: Partial<TargetEvidence> = {}): TargetEvidence => ({
    basis: "a test",
    operations: { total: 0, by_source: {} },
    channels: [],
    notes: [],
    ...overrides,
  });
  const row = (rows: ReturnType<typeof capabilities>, agent: string) =>
    rows.find((candidate) => candidate.agent === agent);

  it("runs API on an inventory with no document, saying where its operations came from", () => {
    const rows = capabilities(
      bare("external"),
      agents,
      evidence({ operations: { total: 212, by_source: { source: 180, frontend: 32, traffic: 5 } } }),
    );
    expect(row(rows, "API")).toEqual({
      agent: "API",
      canRun: true,
      reasons: [],
      works_from: "212 operations — 0 documented, 180 from source, 32 from the frontend, 5 from traffic",
    });
    expect(row(rows, "AUDITOR")?.works_from).toBe("http://127.0.0.1:9 (external): 212 operations");
  });

  it("names the document and how it was found", () => {
    const rows = capabilities(
      bare("external"),
      agents,
      evidence({
        operations: { total: 3, by_source: { openapi: 2, source: 3 } },
        openapi: {
          source: "api/swagger.yaml",
          version: "2.0",
          found: "not in the profile: file api/swagger.yaml",
        },
      }),
    );
    expect(row(rows, "API")?.works_from).toBe(
      "3 operations — 2 documented, 3 from source; document api/swagger.yaml (not in the profile: file api/swagger.yaml)",
    );
  });

  it("refuses API only when there is nothing: no operations anywhere and no live app to crawl", () => {
    expect(row(capabilities(bare("none"), agents, evidence()), "API")?.reasons).toContain(
      "nothing to work on: no OpenAPI document, no routes in the source, and no running app to crawl: add api.openapi, source.path or environment.base_url",
    );
    const live = row(capabilities(bare("external"), agents, evidence()), "API");
    expect(live?.canRun).toBe(true);
    expect(live?.works_from).toBe("no operations known yet: the map phase crawls http://127.0.0.1:9");
  });

  it("runs SOCKET on channels found in the source or the map, and DBA on a database found in the source", () => {
    const rows = capabilities(
      bare("external"),
      agents,
      evidence({
        channels: [
          { path: "/socket.io", protocol: "socket.io", seen_in: ["source"] },
          { path: "/ws", seen_in: ["source", "traffic"] },
        ],
        database: { kind: "sqlite", path: "data/app.db", in: "src/db.py:12" },
      }),
    );
    expect(row(rows, "SOCKET")?.works_from).toBe(
      "2 channels (socket.io /socket.io from source, /ws from source and traffic)",
    );
    expect(row(rows, "DBA")?.works_from).toBe("sqlite data/app.db (found in src/db.py:12)");
    // What the profile declares wins over what was found, and is said to come from it.
    const declared = target(
      {
        name: "x",
        source: { path: "." },
        environment: { mode: "external", base_url: "http://127.0.0.1:9" },
        websocket: { paths: ["/ws"] },
        database: { kind: "postgres", url: "secret_ref:APP_DATABASE_URL" },
      },
      root,
    );
    const fromProfile = capabilities(
      declared,
      agents,
      evidence({
        channels: [{ path: "/ws", protocol: "websocket", seen_in: ["source"] }],
        database: { kind: "sqlite", path: "other.db", in: "x.py:1", tables: 4 },
      }),
    );
    expect(row(fromProfile, "SOCKET")?.works_from).toBe("1 channel (websocket /ws from profile and source)");
    expect(row(fromProfile, "DBA")?.works_from).toBe("postgres from APP_DATABASE_URL (profile, 4 tables)");
    expect(row(capabilities(bare("external"), agents, evidence()), "DBA")?.canRun).toBe(false);
  });
});

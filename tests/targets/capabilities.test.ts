import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.ts";
import { capabilities } from "../../src/targets/capabilities.ts";
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
      "no OpenAPI document: add api.openapi (a file under the source root or a URL path)",
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
    expect(rows.SOCKET).toEqual(["no WebSocket channels: add websocket.paths"]);
    expect(rows.DBA).toEqual(["no database: add database (kind and path or url)"]);
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

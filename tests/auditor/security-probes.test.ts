import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import { authzTools } from "../../src/tools/servers/authz-server.ts";
import { securityTools } from "../../src/tools/servers/security-server.ts";
import type { InventoryServer } from "../fixtures/inventory-server.ts";
import type { NotesServer } from "../fixtures/notes-server.ts";
import type { FixtureTarget } from "../fixtures/targets.ts";
import { inventoryTarget, notesTarget, summarize } from "../fixtures/targets.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";
import { callTool } from "../support/fake-run-context.ts";

const execute = promisify(execFile);
let notes: FixtureTarget<NotesServer>;
let inventory: FixtureTarget<InventoryServer>;
const tools = [...authzTools, ...securityTools];

beforeAll(async () => {
  [notes, inventory] = await Promise.all([notesTarget(), inventoryTarget()]);
});
afterAll(async () => {
  await Promise.all([notes.server.close(), inventory.server.close()]);
});

async function probe(
  tool: string,
  context: FakeRunContext,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const result = await callTool(tools.find((candidate) => candidate.name === tool)!, {}, context);
  if (!result.ok) throw new Error(result.error);
  const data = result.data as { candidates: EnvelopeDraft[]; stats: Record<string, unknown> };
  for (const candidate of data.candidates) EnvelopeDraftSchema.parse(candidate);
  return data;
}

function artifactsText(context: FakeRunContext): string {
  const texts: string[] = [];
  const walk = (folder: string) => {
    for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(full);
      else texts.push(fs.readFileSync(full, "utf8"));
    }
  };
  walk(context.artifactsDir);
  return texts.join("\n");
}

async function failingTestFails(
  context: FakeRunContext,
  draft: EnvelopeDraft,
  baseUrl: string,
): Promise<string> {
  const item = draft.evidence.find((evidence) => evidence.kind === "failing_test")!;
  const file = path.join(context.artifactsDir, item.uri!.replace(/^artifact:\/\/[^/]+\//, ""));
  try {
    await execute(process.execPath, ["--test", file], {
      env: { ...process.env, QAAS_BASE_URL: baseUrl },
      timeout: 20_000,
    });
  } catch (error) {
    return `${(error as { stdout?: string }).stdout ?? ""}`;
  }
  throw new Error(`${file} passed although the defect exists`);
}

describe("AUDITOR probes on the notes fixture", () => {
  it("authz_matrix: another user of the same role and another tenant read the note; PATCH/DELETE (404 for others) and public /api/info are not findings", async () => {
    const context = notes.context({ agent: "AUDITOR" });
    const { candidates } = await probe("authz_matrix", context);
    expect(summarize(candidates)).toEqual(["missing-authorization GET /api/notes/{noteId}"]);
    expect(candidates[0]!.title).toBe(
      "GET /api/notes/{noteId} lets bob (same-role), carol (other-tenant) read alice's data",
    );
    expect(candidates[0]!.severity).toBe("high");
    expect(await failingTestFails(context, candidates[0]!, notes.server.baseUrl)).toMatch(
      /must not read alice's data/,
    );
  });

  it("probe_injection: the string-built search is injectable; the whitelisted ORDER BY is not", async () => {
    const context = notes.context({ agent: "AUDITOR" });
    const { candidates } = await probe("probe_injection", context);
    expect(summarize(candidates)).toEqual(["injection GET /api/search [query:q]"]);
    expect(candidates[0]!.title).toMatch(/error-based/);
    expect(
      candidates[0]!.evidence
        .filter((item) => item.kind === "exchange")
        .map((item) => item.description.split(":")[0]),
    ).toEqual(["quote", "doubled-quote", "baseline"]);
    expect(await failingTestFails(context, candidates[0]!, notes.server.baseUrl)).toMatch(
      /input must never reach the SQL text/,
    );
  });

  it("probe_xss: the unescaped search page, not the escaped echo page", async () => {
    const context = notes.context({ agent: "AUDITOR" });
    const { candidates, stats } = await probe("probe_xss", context);
    expect(summarize(candidates)).toEqual(["xss GET /search [query:q]"]);
    // The form's page, and the search page itself: a GET answered with HTML is where the script runs.
    expect(candidates[0]!.location.related).toEqual([
      { kind: "page", value: "/" },
      { kind: "page", value: "/search" },
    ]);
    expect(stats.html_points).toBeGreaterThanOrEqual(2);
    expect(await failingTestFails(context, candidates[0]!, notes.server.baseUrl)).toMatch(
      /must be HTML-escaped/,
    );
  });

  it("scan_exposure: the password hash in the profile and the SQL error of the injectable search, masked in every artifact", async () => {
    const context = notes.context({ agent: "AUDITOR" });
    const { candidates } = await probe("scan_exposure", context);
    // The search pastes a quote into its SQL and answers the database's own message: a disclosure too.
    expect(summarize(candidates)).toEqual([
      "misconfiguration GET /api/search [error-disclosure]",
      "sensitive-data-exposure GET /api/me [password-hash]",
    ]);
    expect(artifactsText(context)).not.toContain("u7Q1n0S2x9cQ0kqGJ1t0ZK8b5mVNQeWa");
    // An error message is no secret: its test keeps every word of the pattern and fails on the fixture.
    const disclosure = candidates.find(
      (candidate) => candidate.dedupe?.discriminator === "error-disclosure",
    )!;
    expect(await failingTestFails(context, disclosure, notes.server.baseUrl)).toMatch(
      /must not carry stack traces/,
    );
    expect(artifactsText(context)).toContain("syntax error");
  });

  it("check_misconfiguration: the debug route leaking the environment and the entry page without headers", async () => {
    const context = notes.context({ agent: "AUDITOR" });
    const { candidates } = await probe("check_misconfiguration", context);
    expect(summarize(candidates)).toEqual([
      "misconfiguration / [security-headers]",
      "misconfiguration GET /debug/vars [debug-endpoint]",
    ]);
    const debug = candidates.find((candidate) => candidate.dedupe?.discriminator === "debug-endpoint")!;
    expect(debug.severity).toBe("high");
    const text = artifactsText(context);
    expect(text).not.toContain("hunter2pass");
    expect(text).not.toContain("s3cr3t-4f9a8b7c6d5e4f3a2b1c");
  });
});

describe("AUDITOR probes on the inventory fixture", () => {
  it("finds the unauthenticated report and feedback, the admin listing open to staff, the numeric injection and the CORS reflection, and nothing else", async () => {
    const context = inventory.context({ agent: "AUDITOR" });
    const answers = await Promise.all(
      ["authz_matrix", "probe_injection", "probe_xss", "scan_exposure", "check_misconfiguration"].map(
        (tool) => probe(tool, context),
      ),
    );
    expect(summarize(answers.flatMap((answer) => answer.candidates))).toEqual([
      "injection GET /api/products/{productId} [path:productId]",
      "misconfiguration GET /api/admin/users [cors]",
      "missing-authentication GET /api/reports",
      "missing-authentication POST /api/feedback [create]",
      "missing-authorization GET /api/admin/users",
    ]);
    const injection = answers[1]!.candidates[0]!;
    expect(injection.title).toMatch(/blind-error/);
    expect(await failingTestFails(context, injection, inventory.server.baseUrl)).toMatch(
      /an arithmetic expression and its broken twin must answer alike/,
    );
  });
});

describe("AUDITOR write policy", () => {
  it("sends no write to an external target without allow_writes", async () => {
    const before = notes.server.requests.length;
    const context = notes.context({ mode: "external", agent: "AUDITOR" });
    const answers = await Promise.all(
      ["authz_matrix", "probe_injection", "probe_xss", "scan_exposure"].map((tool) => probe(tool, context)),
    );
    const writes = notes.server.requests
      .slice(before)
      .filter((request) => request.method !== "GET" && request.path !== "/api/login");
    expect(writes).toEqual([]);
    // Reads still work: the injectable search is a GET.
    expect(summarize(answers[1]!.candidates)).toEqual(["injection GET /api/search [query:q]"]);
  });
});

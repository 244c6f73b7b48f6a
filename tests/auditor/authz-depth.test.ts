import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import { verticalPairs } from "../../src/probes/auditor/authz-vertical.ts";
import { forgeToken, parseJwt } from "../../src/probes/auditor/forged-tokens.ts";
import { authzTools } from "../../src/tools/servers/authz-server.ts";
import { securityTools } from "../../src/tools/servers/security-server.ts";
import type { FixtureTarget } from "../fixtures/targets.ts";
import { summarize, trackerTarget } from "../fixtures/targets.ts";
import type { TrackerServer } from "../fixtures/tracker-server.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";
import { callTool } from "../support/fake-run-context.ts";

// The tracker fixture twice: every defect switched on, and the correct look-alike. Each gap the security
// probes close has a finding on the first and silence on the second.

const execute = promisify(execFile);
const tools = [...authzTools, ...securityTools];
let defective: FixtureTarget<TrackerServer>;
let correct: FixtureTarget<TrackerServer>;

beforeAll(async () => {
  [defective, correct] = await Promise.all([
    trackerTarget({
      cardsAcrossTenants: true,
      privilegedOpen: true,
      unsignedTokens: true,
      profileHash: true,
    }),
    trackerTarget(),
  ]);
});
afterAll(async () => {
  await Promise.all([defective.server.close(), correct.server.close()]);
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

/** Runs the draft's generated test against `baseUrl`; answers its output when it fails, throws when it passes. */
async function generatedTestOutput(
  context: FakeRunContext,
  draft: EnvelopeDraft,
  baseUrl: string,
): Promise<{ failed: boolean; output: string }> {
  const item = draft.evidence.find((evidence) => evidence.kind === "failing_test")!;
  const file = path.join(context.artifactsDir, item.uri!.replace(/^artifact:\/\/[^/]+\//, ""));
  expect(fs.existsSync(file)).toBe(true);
  try {
    await execute(process.execPath, ["--test", file], {
      env: { ...process.env, QAAS_BASE_URL: baseUrl },
      timeout: 20_000,
    });
    return { failed: false, output: "" };
  } catch (error) {
    return { failed: true, output: `${(error as { stdout?: string }).stdout ?? ""}` };
  }
}

// The whole matrix against a live fixture: seconds on a quiet machine, far more on a loaded one.
describe("authz_matrix on the tracker fixture", { timeout: 120_000 }, () => {
  it("finds the cross-tenant card read, members reaching privileged reads and the unsigned token; the correct tracker is silent", async () => {
    const context = defective.context({ agent: "AUDITOR" });
    const { candidates, stats } = await probe("authz_matrix", context);
    expect(summarize(candidates)).toEqual([
      "broken-authentication GET /api/me [forged-token]",
      "missing-authorization GET /api/admin/members",
      "missing-authorization GET /api/billing/summary",
      "missing-authorization GET /api/cards/{cardId}",
      "missing-authorization GET /api/reports/usage",
      // Validated before the role check in both builds: only a member's valid create tells them apart.
      "missing-authorization POST /api/admin/invitations [create]",
    ]);
    const byLocation = new Map(candidates.map((candidate) => [candidate.location.value, candidate]));
    // Cards exist only under a board: the probe made one (board first) and only the other tenant leaks.
    expect(byLocation.get("GET /api/cards/{cardId}")!.title).toBe(
      "GET /api/cards/{cardId} lets cat (other-tenant) read ann's data",
    );
    expect(byLocation.get("GET /api/admin/members")!.title).toBe(
      "GET /api/admin/members lets ann (lower-role) read ada's data",
    );
    const forged = byLocation.get("GET /api/me")!;
    expect(forged.severity).toBe("critical");
    expect(
      forged.evidence
        .filter((item) => item.kind === "exchange")
        .map((item) => item.description.split(":")[0]),
    ).toEqual(["forged (alg none)", "owner", "anonymous", "confirm"]);
    expect(stats.vertical_leaks).toBe(3);
    for (const draft of [forged, byLocation.get("GET /api/cards/{cardId}")!]) {
      const run = await generatedTestOutput(context, draft, defective.server.baseUrl);
      expect(run.failed).toBe(true);
    }
    const silent = await probe("authz_matrix", correct.context({ agent: "AUDITOR" }));
    expect(summarize(silent.candidates)).toEqual([]);
  });

  it("the generated forged-token test passes once tokens are verified", async () => {
    const context = defective.context({ agent: "AUDITOR" });
    const { candidates } = await probe("authz_matrix", context);
    const forged = candidates.find((candidate) => candidate.defect_class === "broken-authentication")!;
    const run = await generatedTestOutput(context, forged, correct.server.baseUrl);
    expect(run).toEqual({ failed: false, output: "" });
  });
});

describe("scan_exposure on the tracker fixture", () => {
  it("reads people by ids harvested from the caller's answers and reports the password hash, masked; the correct tracker is silent", async () => {
    const context = defective.context({ agent: "AUDITOR" });
    const { candidates } = await probe("scan_exposure", context);
    expect(summarize(candidates)).toEqual([
      "sensitive-data-exposure GET /api/people/{personId} [password-hash]",
    ]);
    const silent = await probe("scan_exposure", correct.context({ agent: "AUDITOR" }));
    expect(summarize(silent.candidates)).toEqual([]);
    // Harvested ids address reads only: nothing but GETs ever reached a person.
    expect(
      defective.server.requests.filter(
        (request) => request.path.startsWith("/api/people/") && request.method !== "GET",
      ),
    ).toEqual([]);
  });
});

describe("forged tokens and vertical pairs", () => {
  it("forges alg none and an altered payload the way the generated test does", () => {
    const header = Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })).toString("base64url");
    const payload = Buffer.from(JSON.stringify({ sub: 11, exp: 9 })).toString("base64url");
    const jwt = parseJwt(`${header}.${payload}.signature`)!;
    expect(parseJwt("opaque-session-id")).toBeUndefined();
    const none = forgeToken(jwt, { kind: "alg-none" });
    expect(none.endsWith(`.${payload}.`)).toBe(true);
    expect(parseJwt(none)!.header).toEqual({ alg: "none", typ: "JWT" });
    const altered = forgeToken(jwt, { kind: "claims", claims: { sub: 12 } });
    expect(parseJwt(altered)!.payload).toEqual({ sub: 12, exp: 9 });
    expect(altered.endsWith(".signature")).toBe(true);
  });

  it("pairs the most and least privileged users of the same tenant, never across tenants", () => {
    const user = (name: string, role: string, tenant?: string) => ({ name, role, tenant });
    const pairs = verticalPairs([
      user("ann", "member", "north"),
      user("ada", "admin", "north"),
      user("cat", "member", "south"),
      user("ops", "platform_admin", "ops"),
    ]);
    expect(pairs.map((pair) => [pair.privileged.name, pair.lower.name])).toEqual([["ada", "ann"]]);
    const global = verticalPairs([user("dana", "staff", "north"), user("root", "admin")]);
    expect(global.map((pair) => [pair.privileged.name, pair.lower.name])).toEqual([["root", "dana"]]);
  });
});

import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import { probeInjectionTool } from "../../src/tools/servers/security-server.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";
import { callTool } from "../support/fake-run-context.ts";
import type { SqliServer } from "./sqli-server.ts";
import { startSqliServer } from "./sqli-server.ts";

const execute = promisify(execFile);
let server: SqliServer;
let candidates: EnvelopeDraft[];
let stats: Record<string, unknown>;
let context: FakeRunContext;

beforeAll(async () => {
  server = await startSqliServer();
  const map = systemMapFor({ target: "catalogue", baseUrl: server.baseUrl, document: server.document });
  const profile = profileFor({
    name: "catalogue",
    source: {},
    environment: { mode: "managed", base_url: server.baseUrl },
  });
  context = probeContext({ profile, map, agent: "AUDITOR" });
  const result = await callTool(probeInjectionTool, {}, context);
  if (!result.ok) throw new Error(result.error);
  ({ candidates, stats } = result.data as { candidates: EnvelopeDraft[]; stats: Record<string, unknown> });
  for (const candidate of candidates) EnvelopeDraftSchema.parse(candidate);
}, 120_000);
afterAll(async () => {
  await server.close();
});

const injections = () => candidates.filter((candidate) => candidate.defect_class === "injection");

function finding(endpoint: string): EnvelopeDraft | undefined {
  return injections().find((candidate) => candidate.location.value === endpoint);
}

async function failingTestOutput(draft: EnvelopeDraft): Promise<string> {
  const item = draft.evidence.find((evidence) => evidence.kind === "failing_test")!;
  const file = path.join(context.artifactsDir, item.uri!.replace(/^artifact:\/\/[^/]+\//, ""));
  try {
    await execute(process.execPath, ["--test", file], {
      env: { ...process.env, QAAS_BASE_URL: server.baseUrl },
      timeout: 20_000,
    });
  } catch (error) {
    return `${(error as { stdout?: string }).stdout ?? ""}`;
  }
  throw new Error(`${file} passed although the defect exists`);
}

describe("probe_injection across contexts, error styles and input locations", () => {
  it("finds every operation that pastes its input into SQL, and none of the safe look-alikes", () => {
    expect(
      injections()
        .map((candidate) => candidate.location.value)
        .sort(),
    ).toEqual([
      "GET /v/by-pref",
      "GET /v/by-tag",
      "GET /v/items",
      "GET /v/items/{id}",
      "GET /v/page",
      "GET /v/search",
      "GET /v/sorted",
      "POST /v/filter",
      "POST /v/query",
      "POST /v/redeem",
      "POST /v/sign-in",
      "POST /v/upload",
    ]);
  });

  it("names the input point and the technique that proved each", () => {
    const title = (endpoint: string) => finding(endpoint)?.title ?? "";
    expect(title("GET /v/by-tag")).toMatch(/header X-Tag .*\(error-based\)/);
    expect(title("GET /v/by-pref")).toMatch(/cookie pref .*\(blind-error\)/);
    expect(title("GET /v/items")).toMatch(/query name .*\(blind-error\)/);
    expect(title("GET /v/search")).toMatch(/query q .*\(boolean\)/);
    expect(title("GET /v/page")).toMatch(/query limit .*\(blind-error\)/);
    expect(title("POST /v/filter")).toMatch(/body filter\.tags\.0 /);
    expect(title("POST /v/upload")).toMatch(/body title /);
    expect(title("POST /v/redeem")).toMatch(/body code .*\(time-based\)/);
    expect(title("POST /v/query")).toMatch(/body code .*\(boolean\)/);
  });

  it("rules out the endpoint without SQL that answers 500 to an odd number of quotes", () => {
    expect(finding("GET /s/echo")).toBeUndefined();
    expect(server.requests.get("/s/echo")).toBeGreaterThan(3);
  });

  it("gives each finding a generated test that fails while the flaw is there", async () => {
    expect(await failingTestOutput(finding("GET /v/items")!)).toMatch(/must answer alike/);
    expect(await failingTestOutput(finding("GET /v/by-tag")!)).toMatch(/input must never reach the SQL text/);
    expect(await failingTestOutput(finding("POST /v/redeem")!)).toMatch(
      /an SQL sleep in the input must not delay/,
    );
  });

  it("reports a database error sent back in a redirect's Location, apart from the injection", async () => {
    const leaks = candidates.filter((candidate) => candidate.dedupe?.discriminator === "error-in-redirect");
    expect(leaks.map((leak) => `${leak.defect_class} ${leak.location.value}`)).toEqual([
      "sensitive-data-exposure POST /v/sign-in",
    ]);
    expect(leaks[0]!.summary).toMatch(/Location carries the database's error message/);
    expect(await failingTestOutput(leaks[0]!)).toMatch(
      /a redirect must not carry the database's error message/,
    );
  });

  it("keeps the request count per input point bounded", () => {
    expect(stats.points).toBeGreaterThanOrEqual(18);
    expect(stats.max_requests_per_point as number).toBeLessThanOrEqual(40);
    expect(stats.mean_requests_per_point as number).toBeLessThanOrEqual(14);
  });
});

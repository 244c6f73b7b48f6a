import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EnvelopeDraft, EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import type { SystemMap } from "../../src/map/system-map.ts";
import { looksLikeErrorPayload } from "../../src/probes/api/value-tools.ts";
import { contractTools } from "../../src/tools/servers/contract-server.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import { summarize } from "../fixtures/targets.ts";
import { callTool } from "../support/fake-run-context.ts";
import type { StatusServer } from "./status-fixture.ts";
import { startStatusServer } from "./status-fixture.ts";

let server: StatusServer;
let documented: SystemMap;

beforeAll(async () => {
  server = await startStatusServer();
  process.env.STATUS_ADA_PASSWORD = "ada-pw";
  process.env.STATUS_BEN_PASSWORD = "ben-pw";
  documented = systemMapFor({ target: "status", baseUrl: server.baseUrl, document: server.document });
});
afterAll(() => server.close());

/** The same operations as a source reader would infer them: no document, no declared statuses. */
function withoutDocument(map: SystemMap): SystemMap {
  return {
    ...map,
    openapi: null,
    operations: map.operations.map((operation) => ({
      ...operation,
      documented: false,
      seen_in: ["source" as const],
      security: "unknown" as const,
      responses: {},
    })),
  };
}

/** Each finding's place and, after `+`, the further places it names (a finding that groups operations). */
let lastRelated: string[] = [];
let lastDrafts: EnvelopeDraft[] = [];
let lastArtifacts = "";

async function probe(tool: string, map: SystemMap): Promise<string[]> {
  const profile = profileFor({
    name: "status",
    source: {},
    environment: { mode: "managed", base_url: server.baseUrl, allow_writes: true },
    auth: { login: { kind: "json", endpoint: "POST /api/login", token_from: "body:token" } },
    users: [
      {
        name: "ada",
        role: "member",
        tenant: "one",
        username: "ada",
        password: "secret_ref:STATUS_ADA_PASSWORD",
      },
      {
        name: "ben",
        role: "member",
        tenant: "one",
        username: "ben",
        password: "secret_ref:STATUS_BEN_PASSWORD",
      },
    ],
  });
  const context = probeContext({ profile, map });
  lastArtifacts = context.artifactsDir;
  const definition = contractTools.find((candidate) => candidate.name === tool)!;
  const result = await callTool(definition, {}, context);
  if (!result.ok) throw new Error(result.error);
  const { candidates } = result.data as { candidates: Parameters<typeof summarize>[0] };
  lastRelated = [];
  lastDrafts = [];
  for (const candidate of candidates) {
    const draft = EnvelopeDraftSchema.parse(candidate);
    lastDrafts.push(draft);
    for (const related of draft.location.related ?? [])
      lastRelated.push(`${draft.location.value} + ${related.value}`);
  }
  return summarize(candidates);
}

describe("status oracles", () => {
  it("check_contract: an anonymous refusal answered 200 and a repeated creation's undocumented 409, not on the correct twin", async () => {
    const found = await probe("check_contract", documented);
    expect(found).toContain("wrong-status GET /api/loose/inbox [anonymous-error-2xx]");
    expect(found).toContain("contract-drift POST /api/loose/records [status-409]");
    expect(found).toContain("wrong-status GET /api/loose/profile [anonymous-login-redirect]");
    expect(found.filter((line) => line.includes("/api/strict/"))).toEqual([]);
  });

  it("check_contract without a document still sees the disguised refusal but judges no status against a document", async () => {
    const found = await probe("check_contract", withoutDocument(documented));
    expect(found).toContain("wrong-status GET /api/loose/inbox [anonymous-error-2xx]");
    expect(found).toContain("wrong-status GET /api/loose/profile [anonymous-login-redirect]");
    // A redirect to another JSON read and an HTML page behind the sign-in are not grouped with it.
    expect(lastRelated.filter((line) => line.includes("/api/strict/"))).toEqual([]);
    expect(found.some((line) => line.includes("[status-"))).toBe(false);
    expect(found.filter((line) => line.includes("/api/strict/"))).toEqual([]);
  });

  it("tells error payloads from resources", () => {
    expect(looksLikeErrorPayload({ error: "record not found" })).toBe(true);
    expect(looksLikeErrorPayload({ ok: false, reason: "nope" })).toBe(true);
    expect(looksLikeErrorPayload({ status: "error" })).toBe(true);
    expect(looksLikeErrorPayload({ message: "Record not found" })).toBe(true);
    expect(looksLikeErrorPayload({ id: 3, error: null })).toBe(false);
    expect(looksLikeErrorPayload({ message: "hello there", title: "greeting" })).toBe(false);
    expect(looksLikeErrorPayload({ items: [], error: "partial" })).toBe(false);
    // `result` is a verdict when it holds a word, an envelope only when it holds a structure.
    expect(looksLikeErrorPayload({ result: "error", message: "no such record" })).toBe(true);
    expect(looksLikeErrorPayload({ result: "error" })).toBe(true);
    expect(looksLikeErrorPayload({ result: { name: "x" } })).toBe(false);
    expect(looksLikeErrorPayload({ result: "ok", message: "saved" })).toBe(false);
  });
});

/** The same operations with nothing that reads an item back: no item read, no list. */
function withoutReads(map: SystemMap): SystemMap {
  return {
    ...map,
    operations: map.operations.filter(
      (operation) =>
        operation.method !== "GET" || /\/confirm$/.test(operation.path) || !/\/records/.test(operation.path),
    ),
  };
}

describe("method semantics oracles", () => {
  it("the GET side effect's generated test makes its own record, so it fails on a freshly started server", async () => {
    await probe("probe_semantics", documented);
    const draft = lastDrafts.find((candidate) => candidate.dedupe?.discriminator === "get-side-effect")!;
    const uri = draft.evidence.find((item) => item.kind === "failing_test")!.uri!;
    const file = path.join(lastArtifacts, uri.replace(/^artifact:\/\/[^/]+\//, ""));
    // A fresh server holds none of the probe's records: the test must confirm the one it creates itself.
    const fresh = await startStatusServer();
    try {
      await expect(
        promisify(execFile)(process.execPath, ["--test", file], {
          env: { ...process.env, QAAS_BASE_URL: fresh.baseUrl },
          timeout: 20_000,
        }),
      ).rejects.toMatchObject({ stdout: expect.stringContaining("must not change") });
    } finally {
      await fresh.close();
    }
  });

  it("probe_semantics with no read of the item: the GET action and the PUT are judged by their own answers", async () => {
    const found = await probe("probe_semantics", withoutReads(documented));
    expect(found).toEqual(
      expect.arrayContaining([
        "contract-drift GET /api/loose/records/{recordId}/confirm [get-side-effect]",
        "contract-drift PUT /api/loose/records/{id} [put-not-idempotent]",
      ]),
    );
    expect(found.filter((line) => line.includes("/api/strict/"))).toEqual([]);
  });

  for (const [label, map] of [
    ["with a document", () => documented],
    ["inferred from source only", () => withoutDocument(documented)],
  ] as const) {
    it(`probe_semantics ${label}: unknown id as 200 error, GET side effect, DELETE twice 500, PUT adding up; the correct twin is silent`, async () => {
      const found = await probe("probe_semantics", map());
      expect(found).toEqual(
        expect.arrayContaining([
          "wrong-status GET /api/loose/records/{id} [unknown-id]",
          "contract-drift GET /api/loose/records/{recordId}/confirm [get-side-effect]",
          "unhandled-error DELETE /api/loose/records/{id} [delete-twice]",
          "contract-drift PUT /api/loose/records/{id} [put-not-idempotent]",
        ]),
      );
      expect(found.filter((line) => line.includes("/api/strict/"))).toEqual([]);
    });
  }
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SystemMap } from "../../src/map/system-map.ts";
import { contractTools } from "../../src/tools/servers/contract-server.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import { summarize } from "../fixtures/targets.ts";
import { callTool } from "../support/fake-run-context.ts";
import type { UndocumentedStatusServer } from "./undocumented-status-fixture.ts";
import { startUndocumentedStatusServer } from "./undocumented-status-fixture.ts";

let server: UndocumentedStatusServer;
let documented: SystemMap;

beforeAll(async () => {
  server = await startUndocumentedStatusServer();
  documented = systemMapFor({
    target: "undocumented-status",
    baseUrl: server.baseUrl,
    document: server.document,
  });
});
afterAll(() => server.close());

/** One of the fixture's two APIs, as a source reader infers it: no document, no declared statuses. */
function inferred(api: "a" | "b", keepStatuses: string[] = []): SystemMap {
  return {
    ...documented,
    openapi: null,
    operations: documented.operations
      .filter((operation) => operation.path.startsWith(`/${api}/`))
      .map((operation) => {
        const kept = keepStatuses.includes(`${operation.method.toUpperCase()} ${operation.path}`);
        return {
          ...operation,
          documented: kept,
          seen_in: kept ? (["openapi"] as const) : (["source"] as const),
          responses: kept ? operation.responses : {},
        };
      }),
  } as SystemMap;
}

async function probe(tool: string, map: SystemMap): Promise<string[]> {
  const profile = profileFor({
    name: "undocumented-status",
    source: {},
    environment: { mode: "managed", base_url: server.baseUrl, allow_writes: true },
  });
  const context = probeContext({ profile, map });
  const definition = contractTools.find((candidate) => candidate.name === tool)!;
  const result = await callTool(definition, {}, context);
  if (!result.ok) throw new Error(result.error);
  return summarize((result.data as { candidates: Parameters<typeof summarize>[0] }).candidates);
}

describe("a missing resource answered 200 with an empty body, without a document", () => {
  it("reports null and an empty envelope, not a 404, a filter's [] or a found:false body", async () => {
    const found = await probe("probe_semantics", inferred("a"));
    const wrong = found.filter((line) => line.startsWith("wrong-status"));
    expect(wrong).toEqual(
      expect.arrayContaining([
        "wrong-status GET /a/notes/{id} [unknown-id]",
        "wrong-status GET /a/memos/{id} [unknown-id]",
      ]),
    );
    for (const safe of ["/a/tags/", "/a/folders/", "/a/badges/", "/a/projects/"])
      expect(wrong.filter((line) => line.includes(safe))).toEqual([]);
  });

  it("leaves the operation to the document when one lists its statuses", async () => {
    const found = await probe("probe_semantics", inferred("a", ["GET /a/notes/{id}"]));
    // The document promises 404: the unknown-id oracle reports it, once.
    expect(found.filter((line) => line.includes("GET /a/notes/{id}"))).toEqual([
      "wrong-status GET /a/notes/{id} [unknown-id]",
    ]);
    const onlyOk = inferred("a", ["GET /a/memos/{id}"]);
    const memos = onlyOk.operations.find((operation) => operation.path === "/a/memos/{id}")!;
    memos.responses = { "200": memos.responses["200"]! };
    // A document that promises only 200 is the document's call: nothing to report.
    const judged = await probe("probe_semantics", onlyOk);
    expect(judged.filter((line) => line.includes("/a/memos/{id}"))).toEqual([]);
  });
});

describe("a creation answered 200 where the API's other creations answer 201", () => {
  it("reports the odd creation, not the upsert, the action or the 201 siblings", async () => {
    const found = await probe("check_contract", inferred("a"));
    expect(found.filter((line) => line.includes("[creation-status]"))).toEqual([
      "wrong-status POST /a/projects [creation-status]",
    ]);
  });

  it("stays silent on an API whose creations all answer 200", async () => {
    const found = await probe("check_contract", inferred("b"));
    expect(found.filter((line) => line.includes("[creation-status]"))).toEqual([]);
  });

  it("leaves a creation whose statuses the document lists to the document", async () => {
    const found = await probe("check_contract", inferred("a", ["POST /a/projects"]));
    expect(found.filter((line) => line.includes("[creation-status]"))).toEqual([]);
  });
});

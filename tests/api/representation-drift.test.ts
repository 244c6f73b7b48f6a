import { execFile } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { checkContractTool } from "../../src/tools/servers/contract-server.ts";
import { probeContext, profileFor, systemMapFor, undocumented } from "../fixtures/probe-harness.ts";
import { callTool, type FakeRunContext } from "../support/fake-run-context.ts";

// Three collections served without a document. Meters: the item read formats `reading` as text (12.5 →
// "12.50") while the list keeps the number — drift. Gauges: both representations agree. Labels: the list's
// `size` is a count and the item's `size` a word: different data under one name, not one datum in two types.
const meters = [
  { id: 1, name: "north", reading: 12.5, active: true },
  { id: 2, name: "south", reading: 3, active: false },
];
const gauges = [
  { id: 1, name: "a", level: 4 },
  { id: 2, name: "b", level: 7 },
];
const labels = [
  { id: 1, size: 3 },
  { id: 2, size: 5 },
];

const execute = promisify(execFile);
let server: http.Server;
let baseUrl: string;
let candidates: EnvelopeDraft[];
let context: FakeRunContext;

function json(response: http.ServerResponse, body: unknown): void {
  response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
}

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://x");
    const item = url.pathname.match(/^\/(meters|gauges|labels)\/(\d+)$/);
    if (url.pathname === "/meters") return json(response, { items: meters });
    if (url.pathname === "/gauges") return json(response, gauges);
    if (url.pathname === "/labels") return json(response, labels);
    if (item) {
      const id = Number(item[2]);
      if (item[1] === "meters") {
        const meter = meters.find((entry) => entry.id === id);
        if (meter) return json(response, { data: { ...meter, reading: meter.reading.toFixed(2) } });
      }
      if (item[1] === "gauges") {
        const gauge = gauges.find((entry) => entry.id === id);
        if (gauge) return json(response, gauge);
      }
      if (item[1] === "labels") {
        const label = labels.find((entry) => entry.id === id);
        if (label) return json(response, { id, size: label.size > 4 ? "large" : "small" });
      }
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const map = systemMapFor({ target: "meters", baseUrl, document: { openapi: "3.0.3", paths: {} } });
  map.openapi = null;
  map.operations = ["meters", "gauges", "labels"].flatMap((noun) => [
    undocumented("GET", `/${noun}`),
    {
      ...undocumented("GET", `/${noun}/{id}`),
      parameters: [{ name: "id", in: "path" as const, required: true, schema: { type: "integer" } }],
    },
  ]);
  const profile = profileFor({
    name: "meters",
    source: {},
    environment: { mode: "managed", base_url: baseUrl },
  });
  context = probeContext({ profile, map, agent: "API" });
  const result = await callTool(checkContractTool, {}, context);
  if (!result.ok) throw new Error(result.error);
  candidates = (result.data as { candidates: EnvelopeDraft[] }).candidates;
}, 60_000);

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("contract drift between a list and its item read, without a document", () => {
  it("flags a field whose value comes back in another type, and neither look-alike", () => {
    const drift = candidates.filter((candidate) => candidate.defect_class === "contract-drift");
    expect(drift.map((candidate) => candidate.location.value)).toEqual(["GET /meters/{id}"]);
    expect(drift[0]!.title).toContain("reading");
    expect(drift[0]!.title).not.toContain("active");
    expect(drift[0]!.location.related).toEqual([{ kind: "endpoint", value: "GET /meters" }]);
  });

  it("writes a failing test that reads the field where the item read wraps it", async () => {
    const drift = candidates.find((candidate) => candidate.defect_class === "contract-drift")!;
    const test = drift.evidence.find((evidence) => evidence.kind === "failing_test")!;
    const file = path.join(context.artifactsDir, test.uri!.replace(/^artifact:\/\/[^/]+\//, ""));
    const outcome = await execute(process.execPath, ["--test", file], {
      env: { ...process.env, QAAS_BASE_URL: baseUrl },
      timeout: 20_000,
    }).then(
      () => "passed",
      (error: { stdout?: string }) => error.stdout ?? "",
    );
    expect(outcome).toContain("reading must be a number");
  });
});

import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenPoint } from "../../src/probes/injection/point-sender.ts";
import { sendAt } from "../../src/probes/injection/point-sender.ts";
import { probePoints } from "../../src/probes/injection/probe-frame.ts";
import type { ProbeRun } from "../../src/probes/session/probe-run.ts";
import { openProbeRun } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";

// Twelve query points; only the last one "answers" the cheap first stage. A later, expensive stage would
// spend the budget on the first points; staged, every point gets the cheap stage first.

const POINTS = 12;
let server: http.Server;
let baseUrl: string;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://x");
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ path: url.pathname, q: url.searchParams.get("q") }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function openRun(maxRequests: number): ProbeRun {
  const paths = Object.fromEntries(
    Array.from({ length: POINTS }, (_, index) => [
      `/api/s${String(index).padStart(2, "0")}`,
      {
        get: {
          parameters: [{ name: "q", in: "query", required: true, schema: { type: "string" } }],
          responses: { "200": { description: "ok" } },
        },
      },
    ]),
  );
  const document = { openapi: "3.0.3", info: { title: "stages", version: "1" }, paths };
  const map = systemMapFor({ target: "stages", baseUrl, document });
  const profile = profileFor({
    name: "stages",
    source: {},
    environment: { mode: "external", base_url: baseUrl },
  });
  const run = openProbeRun(probeContext({ profile, map, agent: "AUDITOR" }), "stages", {
    max_requests: maxRequests,
  });
  if (typeof run === "string") throw new Error(run);
  return run;
}

describe("a staged point technique", () => {
  it("gives every point the cheap stage before any point the costly one, keeping what it found when the budget ends", async () => {
    const run = openRun(POINTS * 2 + 5);
    const order: string[] = [];
    const path = (open: OpenPoint) => open.point.operation.path;
    const { hits, stats } = await probePoints(
      run,
      {},
      {
        select: () => true,
        stages: [
          async (open) => {
            order.push(`cheap ${path(open)}`);
            const sent = await sendAt(run, open, "probe");
            return sent && path(open).endsWith(`s${POINTS - 1}`) ? path(open) : undefined;
          },
          async (open) => {
            order.push(`costly ${path(open)}`);
            for (let index = 0; index < 10; index += 1) await sendAt(run, open, `costly-${index}`);
            return undefined;
          },
        ],
      },
    );
    expect(hits).toEqual([`/api/s${POINTS - 1}`]);
    expect(stats.budget_exhausted).toBe(true);
    const firstCostly = order.findIndex((step) => step.startsWith("costly"));
    expect(order.slice(0, firstCostly)).toHaveLength(POINTS);
    expect(order.slice(firstCostly)).not.toContain(`costly /api/s${POINTS - 1}`);
  });
});

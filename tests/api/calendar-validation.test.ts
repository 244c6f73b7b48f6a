import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Operation, SystemMap } from "../../src/map/system-map.ts";
import { futureCalendarFields } from "../../src/probes/api/calendar-validation.ts";
import { contractTools } from "../../src/tools/servers/contract-server.ts";
import { probeContext, profileFor, systemMapFor, undocumented } from "../fixtures/probe-harness.ts";
import { summarize } from "../fixtures/targets.ts";
import { callTool } from "../support/fake-run-context.ts";

// Undocumented JSON creations taking a day: a careless booking accepts yesterday, its careful twin refuses
// it; an expense (a day already spent, past by nature) accepts the past and must stay unflagged; a careless
// booking that does not parse its day at all accepts a malformed one too, so nothing shows it validates.

const today = () => new Date().toISOString().slice(0, 10);

let server: http.Server;
let baseUrl: string;

beforeAll(async () => {
  let next = 1;
  server = http.createServer((request, response) => {
    let text = "";
    request.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    request.on("end", () => {
      const send = (status: number, body: unknown) => {
        response.writeHead(status, { "content-type": "application/json" });
        response.end(JSON.stringify(body));
      };
      const match = (request.url ?? "").match(/^\/api\/(careless|careful|unparsed)\/(bookings|expenses)$/);
      if (request.method !== "POST" || !match) return send(404, { error: "no such route" });
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(text || "{}") as Record<string, unknown>;
      } catch {
        return send(400, { error: "malformed JSON" });
      }
      const day = String(body.day ?? "");
      const parsed = /^\d{4}-\d{2}-\d{2}$/.test(day) && !Number.isNaN(Date.parse(day));
      if (match[1] !== "unparsed" && !parsed) return send(400, { error: "day must look like 2024-05-31" });
      if (match[1] === "careful" && day < today()) return send(422, { error: "day is in the past" });
      return send(201, { id: next++, day, note: body.note ?? null });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function creation(path: string): Operation {
  return {
    ...undocumented("POST", path),
    request_body: {
      content_type: "application/json",
      required: true,
      schema: { type: "object", properties: { day: { type: "string" }, note: { type: "string" } } },
    },
  } as Operation;
}

const OPERATIONS = [
  creation("/api/careless/bookings"),
  creation("/api/careful/bookings"),
  creation("/api/careless/expenses"),
  creation("/api/unparsed/bookings"),
];

function mapOf(operations: Operation[]): SystemMap {
  return {
    ...systemMapFor({ target: "days", baseUrl, document: { openapi: "3.0.3", paths: {} } }),
    openapi: null,
    operations,
  };
}

describe("a past day accepted where the future is implied", () => {
  it("takes date fields of creations that happen later, by collection or field name", () => {
    const map = mapOf(OPERATIONS);
    expect(futureCalendarFields(map, OPERATIONS[0]!).map((field) => field.name)).toEqual(["day"]);
    expect(futureCalendarFields(map, OPERATIONS[2]!)).toEqual([]);
    const withField = (path: string, name: string) =>
      ({
        ...creation(path),
        request_body: {
          content_type: "application/json",
          required: true,
          schema: { type: "object", properties: { [name]: { type: "string" }, title: { type: "string" } } },
        },
      }) as Operation;
    expect(futureCalendarFields(map, withField("/api/rooms", "arrival_date"))).toEqual([
      { name: "arrival_date", format: "date" },
    ]);
    // A task may be created already overdue: a due date alone implies no future.
    expect(futureCalendarFields(map, withField("/api/tasks", "due_date"))).toEqual([]);
  });

  it("fuzz_operation flags the careless booking only", async () => {
    const profile = profileFor({
      name: "days",
      source: {},
      environment: { mode: "managed", base_url: baseUrl, allow_writes: true },
    });
    const context = probeContext({ profile, map: mapOf(OPERATIONS) });
    const definition = contractTools.find((candidate) => candidate.name === "fuzz_operation")!;
    const result = await callTool(definition, { property_runs: 0 }, context);
    if (!result.ok) throw new Error(result.error);
    const found = summarize((result.data as { candidates: Parameters<typeof summarize>[0] }).candidates);
    expect(found.filter((line) => line.includes("past-date"))).toEqual([
      "validation-missing POST /api/careless/bookings [past-date:day]",
    ]);
  });
});

import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Operation, Page, SystemMap } from "../../src/map/system-map.ts";
import {
  calendarEdgeCases,
  calendarFormat,
  pagePathCandidates,
  typedParameterSchema,
  uiQueryValues,
  workingDay,
} from "../../src/probes/api/ui-values.ts";
import { contractTools } from "../../src/tools/servers/contract-server.ts";
import { probeContext, profileFor, systemMapFor, undocumented } from "../fixtures/probe-harness.ts";
import { summarize } from "../fixtures/targets.ts";
import { callTool } from "../support/fake-run-context.ts";

// Two undocumented reads of a shop's opening hours, each taking a day and a staff member: the careless one
// crashes on a day nobody works (a weekend), the careful twin answers an empty list. Only the pages know a
// real shop (`/shops/{slug}` links) and real staff ids (a select of `staff_id`), and that `day` is a date.

const STAFF = new Set(["7", "8"]);
const isoOf = (day: Date) => day.toISOString().slice(0, 10);

let server: http.Server;
let baseUrl: string;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://fixture");
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    const match = url.pathname.match(/^\/api\/(careless|careful)\/shops\/([^/]+)\/hours$/);
    if (!match) return send(404, { error: "no such route" });
    if (match[2] !== "corner") return send(404, { error: "no such shop" });
    if (!STAFF.has(url.searchParams.get("staff") ?? "")) return send(404, { error: "no such staff member" });
    const day = url.searchParams.get("day") ?? "";
    if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(Date.parse(day)))
      return send(400, { error: "day must look like 2024-05-31" });
    const weekend = [0, 6].includes(new Date(`${day}T00:00:00Z`).getUTCDay());
    if (weekend && match[1] === "careless")
      return send(500, { error: "IndexError: list index out of range" });
    return send(200, { day, times: weekend ? [] : ["09:00", "09:30"] });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function hours(flavour: string): Operation {
  return {
    ...undocumented("GET", `/api/${flavour}/shops/{slug}/hours`, ["source", "frontend"]),
    parameters: [
      { name: "slug", in: "path", required: true },
      { name: "day", in: "query", required: false, schema: { type: "string" } },
      { name: "staff", in: "query", required: false, schema: { type: "integer" } },
    ],
  } as Operation;
}

const PAGES: Page[] = [
  { path: "/shops", links: ["/shops/new", "/shops/corner"], forms: [] },
  {
    path: "/shops/corner/book",
    links: [],
    forms: [
      {
        action: "/shops/corner/book",
        method: "POST",
        fields: ["staff_id", "when"],
        inputs: [
          { name: "staff_id", type: "select", required: true, value: "7", options: ["7", "8"] },
          { name: "when", type: "date", required: true },
        ],
      },
    ],
  },
];

function mapOf(operations: Operation[]): SystemMap {
  return {
    ...systemMapFor({ target: "hours", baseUrl, document: { openapi: "3.0.3", paths: {} }, pages: PAGES }),
    openapi: null,
    operations: [undocumented("GET", "/shops/new"), undocumented("GET", "/shops/{slug}"), ...operations],
  };
}

describe("values the pages offer", () => {
  it("types a parameter as a date from a form control of its name or from its name", () => {
    const map = mapOf([]);
    expect(calendarFormat(map, "when")).toBe("date");
    expect(calendarFormat(map, "day")).toBe("date");
    expect(calendarFormat(map, "starts_at")).toBe("date-time");
    expect(calendarFormat(map, "staff")).toBeUndefined();
    expect(calendarFormat(map, "update")).toBeUndefined();
    expect(
      typedParameterSchema(map, { name: "day", in: "query", required: false, schema: { type: "string" } }),
    ).toMatchObject({ type: "string", format: "date" });
    // A declared non-string type is kept.
    expect(
      typedParameterSchema(map, { name: "day", in: "query", required: false, schema: { type: "integer" } }),
    ).toEqual({ type: "integer" });
  });

  it("fills optional query parameters from a form's choices (matching `staff` to `staff_id`) and today", () => {
    const values = uiQueryValues(mapOf([]), hours("careful"), new Date("2026-03-04T10:00:00Z"));
    expect(values).toEqual({ day: "2026-03-04", staff: "7" });
  });

  it("takes path values from concrete URLs after the same collection, never a route's literal segment", () => {
    expect(pagePathCandidates(mapOf([]), hours("careful"))).toEqual([{ slug: "corner" }]);
    expect(pagePathCandidates(mapOf([]), undocumented("GET", "/api/orders/{id}"))).toEqual([]);
  });

  it("tries a read first with a working day: today, or the Monday after a weekend", () => {
    expect(isoOf(workingDay(new Date("2026-12-05T10:00:00Z")))).toBe("2026-12-07");
    expect(isoOf(workingDay(new Date("2026-12-06T10:00:00Z")))).toBe("2026-12-07");
    expect(isoOf(workingDay(new Date("2026-12-08T10:00:00Z")))).toBe("2026-12-08");
  });

  it("offers weekend days, month ends and a leap day, all valid", () => {
    const cases = calendarEdgeCases("date", new Date("2026-03-04T10:00:00Z"));
    const byLabel = Object.fromEntries(cases.map((edge) => [edge.label, edge.value]));
    expect(byLabel["a Saturday"]).toBe("2026-03-07");
    expect(byLabel["a Sunday"]).toBe("2026-03-08");
    expect(byLabel["a month's last day"]).toBe("2026-03-31");
    expect(byLabel["a leap day"]).toBe("2028-02-29");
    expect(cases.every((edge) => edge.expectation === "valid")).toBe(true);
  });
});

describe("fuzz_operation without a document", () => {
  it("reaches a read through page values and finds the weekend crash, not on the careful twin", async () => {
    const profile = profileFor({
      name: "hours",
      source: {},
      environment: { mode: "external", base_url: baseUrl },
    });
    const context = probeContext({ profile, map: mapOf([hours("careless"), hours("careful")]) });
    const definition = contractTools.find((candidate) => candidate.name === "fuzz_operation")!;
    const result = await callTool(definition, { property_runs: 0 }, context);
    if (!result.ok) throw new Error(result.error);
    const found = summarize((result.data as { candidates: Parameters<typeof summarize>[0] }).candidates);
    expect(found).toEqual(["unhandled-error GET /api/careless/shops/{slug}/hours [query:day]"]);
  });
});

import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Operation, Page, SystemMap } from "../../src/map/system-map.ts";
import { inferredChoices } from "../../src/probes/api/enum-validation.ts";
import { contractTools } from "../../src/tools/servers/contract-server.ts";
import { probeContext, profileFor, systemMapFor, undocumented } from "../fixtures/probe-harness.ts";
import { summarize } from "../fixtures/targets.ts";
import { callTool } from "../support/fake-run-context.ts";

// Undocumented order lines with a priority. The allowed priorities are known from a sibling that takes the
// same fields and refuses others (its source check is its schema's enum) or from the form's options.
// Careless lines store any priority; careful lines refuse one outside the set; defaulting lines answer
// success but store a default instead; previews echo the body and store nothing. Tickets take a free-text
// `priority` with other fields, so the sibling's set says nothing about them.

const PRIORITIES = ["low", "normal", "high"];

let server: http.Server;
let baseUrl: string;

beforeAll(async () => {
  let next = 1;
  const stored = new Map<string, Record<string, unknown>>();
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
      const url = request.url ?? "";
      const read = url.match(/^\/api\/(\w+)\/lines\/(\d+)$/);
      if (request.method === "GET" && read) {
        const line = stored.get(`${read[1]}/${read[2]}`);
        return line ? send(200, line) : send(404, { error: "not found" });
      }
      const create = url.match(/^\/api\/(careless|careful|defaulting|checked|tickets|previews)\/lines$/);
      if (request.method !== "POST" || !create) return send(404, { error: "no such route" });
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(text || "{}") as Record<string, unknown>;
      } catch {
        return send(400, { error: "malformed JSON" });
      }
      if (typeof body.sku !== "string" || typeof body.quantity !== "number")
        return send(400, { error: "sku and quantity are required" });
      let priority = body.priority;
      const known = PRIORITIES.includes(String(priority));
      if ((create[1] === "careful" || create[1] === "checked") && !known)
        return send(400, { error: "priority must be low, normal or high" });
      if (create[1] === "defaulting" && !known) priority = "normal";
      // A preview computes and echoes, it stores nothing.
      if (create[1] === "previews") return send(200, { sku: body.sku, quantity: body.quantity, priority });
      const line = { id: next++, sku: body.sku, quantity: body.quantity, priority };
      stored.set(`${create[1]}/${line.id}`, line);
      // Careless lines answer only the id: the read-back is what shows the stored value.
      return send(201, create[1] === "careless" ? { id: line.id } : line);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function creation(path: string, priority: Record<string, unknown>, others = ["sku", "quantity"]): Operation {
  const properties: Record<string, unknown> = { priority };
  for (const name of others) properties[name] = { type: name === "quantity" ? "integer" : "string" };
  return {
    ...undocumented("POST", path),
    request_body: {
      content_type: "application/json",
      required: true,
      schema: { type: "object", properties },
    },
  } as Operation;
}

function reader(path: string): Operation {
  return {
    ...undocumented("GET", path),
    parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
  } as Operation;
}

const OPERATIONS = [
  creation("/api/checked/lines", { type: "string", enum: PRIORITIES }),
  creation("/api/careless/lines", { type: "string" }),
  reader("/api/careless/lines/{id}"),
  creation("/api/careful/lines", { type: "string" }),
  reader("/api/careful/lines/{id}"),
  creation("/api/defaulting/lines", { type: "string" }),
  creation("/api/previews/lines", { type: "string" }),
  creation("/api/tickets/lines", { type: "string" }, ["sku", "title"]),
];

function mapOf(operations: Operation[], pages: Page[] = []): SystemMap {
  return {
    ...systemMapFor({ target: "lines", baseUrl, document: { openapi: "3.0.3", paths: {} } }),
    openapi: null,
    operations,
    pages,
  };
}

describe("a value outside a field's allowed set, without a document", () => {
  it("learns the set from a sibling taking the same fields, or from the options of the form posting it", () => {
    const map = mapOf(OPERATIONS);
    expect(inferredChoices(map, OPERATIONS[1]!)).toEqual([
      { field: "priority", values: PRIORITIES, from: "POST /api/checked/lines, which takes the same fields" },
    ]);
    // One field in common is not the same kind of record.
    expect(inferredChoices(map, OPERATIONS[7]!)).toEqual([]);
    const page = {
      path: "/tickets/new",
      title: "New ticket",
      links: [],
      forms: [
        {
          action: "/api/tickets/lines",
          method: "POST",
          fields: ["priority", "sku", "title"],
          inputs: [
            { name: "priority", type: "select", options: ["p1", "p2", "p3"] },
            { name: "sku", type: "text" },
          ],
        },
      ],
    } as unknown as Page;
    expect(inferredChoices(mapOf(OPERATIONS, [page]), OPERATIONS[7]!)).toEqual([
      { field: "priority", values: ["p1", "p2", "p3"], from: "the options of the form that posts it" },
    ]);
  });

  it("fuzz_operation flags the line that stores any priority, not one refusing it, storing a default or only echoing it", async () => {
    const profile = profileFor({
      name: "lines",
      source: {},
      environment: { mode: "managed", base_url: baseUrl, allow_writes: true },
    });
    const context = probeContext({ profile, map: mapOf(OPERATIONS) });
    const definition = contractTools.find((candidate) => candidate.name === "fuzz_operation")!;
    const result = await callTool(definition, { property_runs: 0 }, context);
    if (!result.ok) throw new Error(result.error);
    const drafts = (result.data as { candidates: Parameters<typeof summarize>[0] }).candidates;
    const found = summarize(drafts).filter((line) => line.includes("validation-missing"));
    expect(found).toEqual(["validation-missing POST /api/careless/lines [body:priority]"]);
    const evidence = JSON.stringify(drafts);
    expect(evidence).toContain("read-back");
  });
});

import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resourceFamilies } from "../../src/probes/api/operation-index.ts";
import { ResourceFactory } from "../../src/probes/api/resource-factory.ts";
import { RecordCreator } from "../../src/probes/data/record-creator.ts";
import { openProbeRun, type ProbeRun } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";

// Boats need a length although the map marks only the name required (a handler that converts the field
// in a helper, so nothing shows it is needed): a create sent with the required fields alone is refused.
let server: http.Server;
let baseUrl: string;
const bodies: Array<Record<string, unknown>> = [];
let nextId = 1;

const document = {
  openapi: "3.0.3",
  info: { title: "boats", version: "1" },
  paths: {
    "/boats": {
      post: {
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                required: ["name"],
                properties: { name: { type: "string" }, length_m: { type: "number" } },
              },
            },
          },
        },
        responses: { "201": { description: "made" } },
      },
    },
    "/boats/{id}": {
      get: {
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "integer" } }],
        responses: { "200": { description: "one" } },
      },
    },
  },
};

beforeAll(async () => {
  server = http.createServer((request, response) => {
    let text = "";
    request.on("data", (chunk) => {
      text += chunk;
    });
    request.on("end", () => {
      if (request.method !== "POST" || request.url !== "/boats") return response.writeHead(404).end();
      const body = JSON.parse(text || "{}") as Record<string, unknown>;
      bodies.push(body);
      const json = { "content-type": "application/json" };
      if (typeof body.length_m !== "number")
        return response.writeHead(422, json).end(JSON.stringify({ error: "length_m must be a number" }));
      response.writeHead(201, json).end(JSON.stringify({ id: nextId++, ...body }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function boatsRun() {
  const map = systemMapFor({ target: "boats", baseUrl, document });
  const profile = profileFor({
    name: "boats",
    source: {},
    environment: { mode: "managed", base_url: baseUrl },
  });
  const run = openProbeRun(probeContext({ profile, map }), "test") as ProbeRun;
  const family = resourceFamilies(map.operations).find((entry) => entry.collection === "/boats")!;
  return { run, family };
}

describe("a create refused with only its required fields", () => {
  it("is tried once more with every known field by the resource factory", async () => {
    bodies.length = 0;
    const { run, family } = boatsRun();
    const made = await new ResourceFactory(run).create(family, undefined);
    expect(made?.id).toBeDefined();
    expect(bodies.map((body) => Object.keys(body).sort())).toEqual([["name"], ["length_m", "name"]]);
  });

  it("is tried once more by the record creator, which then sends every field from the start", async () => {
    bodies.length = 0;
    const { run, family } = boatsRun();
    const creator = new RecordCreator(run);
    expect((await creator.create(family, undefined)).reason).toBe("created");
    expect((await creator.create(family, undefined)).reason).toBe("created");
    expect(bodies.map((body) => Object.keys(body).sort())).toEqual([
      ["name"],
      ["length_m", "name"],
      ["length_m", "name"],
    ]);
  });
});

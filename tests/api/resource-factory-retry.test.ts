import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resourceFamilies } from "../../src/probes/api/operation-index.ts";
import { ResourceFactory } from "../../src/probes/api/resource-factory.ts";
import { openProbeRun, type ProbeRun } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";

// Widgets: the first create answers 503 (a busy moment), the next ones work. Gizmos never can be made.
let server: http.Server;
let baseUrl: string;
let widgetCreates = 0;
let gizmoCreates = 0;

const document = {
  openapi: "3.0.3",
  info: { title: "widgets", version: "1" },
  paths: Object.fromEntries(
    ["widgets", "gizmos"].flatMap((noun) => [
      [
        `/${noun}`,
        {
          post: {
            requestBody: {
              required: true,
              content: {
                "application/json": {
                  schema: { type: "object", required: ["name"], properties: { name: { type: "string" } } },
                },
              },
            },
            responses: { "201": { description: "made" } },
          },
        },
      ],
      [
        `/${noun}/{id}`,
        {
          get: {
            parameters: [{ name: "id", in: "path", required: true, schema: { type: "integer" } }],
            responses: { "200": { description: "one" } },
          },
        },
      ],
    ]),
  ),
};

beforeAll(async () => {
  server = http.createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      if (request.method === "POST" && request.url === "/widgets") {
        widgetCreates += 1;
        if (widgetCreates === 1) return response.writeHead(503).end();
        return response.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ id: 7 }));
      }
      if (request.method === "POST" && request.url === "/gizmos") {
        gizmoCreates += 1;
        return response.writeHead(503).end();
      }
      response.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("the resource factory's one resource per family", () => {
  it("tries once more after a failed creation, and never again after a second failure", async () => {
    const map = systemMapFor({ target: "widgets", baseUrl, document });
    const profile = profileFor({
      name: "widgets",
      source: {},
      environment: { mode: "managed", base_url: baseUrl },
    });
    const run = openProbeRun(probeContext({ profile, map }), "test") as ProbeRun;
    const factory = new ResourceFactory(run);
    const [widgets, gizmos] = ["/widgets", "/gizmos"].map(
      (collection) => resourceFamilies(map.operations).find((family) => family.collection === collection)!,
    );
    expect((await factory.ensure(widgets!, undefined))?.id).toBe("7");
    expect(await factory.ensure(gizmos!, undefined)).toBeUndefined();
    expect(await factory.ensure(gizmos!, undefined)).toBeUndefined();
    expect({ widgetCreates, gizmoCreates }).toEqual({ widgetCreates: 2, gizmoCreates: 2 });
  });
});

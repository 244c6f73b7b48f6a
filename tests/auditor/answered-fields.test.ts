import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Operation } from "../../src/map/system-map.ts";
import { probeXss } from "../../src/probes/auditor/xss.ts";
import { openProbeRun } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, undocumented, undocumentedMap } from "../fixtures/probe-harness.ts";

// A handler that checks a field nothing documents before the one a probe aims at: the preview answers 400
// "Missing parameter 'price'" until the request carries a price, and only then echoes the note raw. The
// point's baseline request follows that answer, so the probe reaches the note field.

let server: http.Server;
let baseUrl: string;
const previews: Array<Record<string, string>> = [];

beforeAll(async () => {
  server = http.createServer(async (request, response) => {
    let text = "";
    for await (const chunk of request) text += chunk;
    if (request.method === "POST" && request.url === "/preview") {
      const fields = Object.fromEntries(new URLSearchParams(text));
      if (!fields.price)
        return response.writeHead(400, { "content-type": "text/plain" }).end("Missing parameter 'price'");
      previews.push(fields);
      return response.writeHead(200, { "content-type": "text/html" }).end(`<p>${fields.note ?? ""}</p>`);
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("a point's baseline request and the fields its answer asks for", () => {
  it("adds the missing field the handler names and finds the reflection behind it", async () => {
    const preview: Operation = {
      ...undocumented("POST", "/preview", ["source"]),
      request_body: {
        content_type: "application/x-www-form-urlencoded",
        required: true,
        schema: { type: "object", properties: { note: { type: "string" } }, required: ["note"] },
      },
    };
    const map = undocumentedMap("preview", baseUrl, [preview]);
    const profile = profileFor({
      name: "preview",
      source: {},
      environment: { mode: "managed", base_url: baseUrl, allow_writes: true },
    });
    const run = openProbeRun(probeContext({ profile, map, agent: "AUDITOR" }), "probe_xss");
    if (typeof run === "string") throw new Error(run);
    const { candidates } = await probeXss(run, {});
    expect(candidates.map((draft) => `${draft.defect_class} ${draft.location.value}`)).toEqual([
      "xss POST /preview",
    ]);
    expect(previews.length).toBeGreaterThan(0);
    expect(previews.every((fields) => fields.price !== undefined)).toBe(true);
  });
});

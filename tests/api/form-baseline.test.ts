import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page, SystemMap } from "../../src/map/system-map.ts";
import {
  probeContext,
  undocumentedMap,
  undocumentedPost,
  writableProfile,
} from "../fixtures/probe-harness.ts";
import { summarize } from "../fixtures/targets.ts";
import { fuzzCandidates } from "../support/fuzz-run.ts";
import { startTextServer, type TextServer } from "../support/text-server.ts";

// A subscription form handled as many server-rendered apps handle theirs: every control is read, the
// hidden plan id included though the form does not mark it required, and the address must end in a two
// or three letter domain. The quantity is parsed without a guard, so letters in it crash the handler.
// Fuzzing finds that crash only if its baseline is a submission the handler takes.

let server: TextServer;
let baseUrl: string;
const bodies: string[] = [];

beforeAll(async () => {
  server = await startTextServer((request, text, response) => {
    if (request.method !== "POST" || request.url !== "/subscribe") {
      response.writeHead(404);
      return response.end();
    }
    bodies.push(text);
    const body = new URLSearchParams(text);
    const refuse = (reason: string) => {
      response.writeHead(400, { "content-type": "text/html" });
      response.end(`<p>${reason}</p>`);
    };
    if (!/^[^@\s]+@[^@\s]+\.[a-z]{2,3}$/.test(body.get("mail") ?? "")) return refuse("a valid address");
    if (body.get("plan_id") !== "4") return refuse("choose a plan");
    const quantity = body.get("quantity") ?? "1";
    if (!/^\d+$/.test(quantity)) {
      response.writeHead(500, { "content-type": "text/html" });
      return response.end(`<pre>TypeError: Cannot read properties of undefined (reading 'seats')</pre>`);
    }
    response.writeHead(200, { "content-type": "text/html" });
    response.end("<p>Subscribed</p>");
  });
  baseUrl = server.baseUrl;
});
afterAll(() => server.close());

function subscribeMap(): SystemMap {
  const operation = undocumentedPost(
    "/subscribe",
    "application/x-www-form-urlencoded",
    {
      mail: { type: "string", format: "email" },
      quantity: { type: "integer", minimum: 1 },
      plan_id: { type: "string", default: "4" },
    },
    ["mail"],
  );
  const inputs = [
    { name: "mail", type: "email", required: true },
    { name: "quantity", type: "number", required: false },
    { name: "plan_id", type: "hidden", required: false, value: "4" },
  ];
  const page: Page = {
    path: "/plans",
    status: 200,
    html: true,
    links: [],
    forms: [{ action: "/subscribe", method: "POST", fields: inputs.map((input) => input.name), inputs }],
  } as Page;
  return { ...undocumentedMap("plans", baseUrl, [operation]), pages: [page] };
}

describe("fuzz_operation on a form that reads every control", () => {
  it("starts from a submission the form's handler takes, so a field's crash is reached", async () => {
    const profile = writableProfile("plans", baseUrl);
    const context = probeContext({ profile, map: subscribeMap() });
    expect(summarize(await fuzzCandidates(context))).toContain(
      "unhandled-error POST /subscribe [body:quantity]",
    );
    // The first request is the baseline: every control, the page's hidden value, an address validators take.
    const baseline = new URLSearchParams(bodies[0]);
    expect(baseline.get("plan_id")).toBe("4");
    expect(baseline.get("mail")).toMatch(/@example\.com$/);
    expect(baseline.get("quantity")).toMatch(/^\d+$/);
  });
});

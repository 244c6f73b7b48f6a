import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Operation, SystemMap } from "../../src/map/system-map.ts";
import { checkCsrf } from "../../src/probes/auth/check-csrf.ts";
import { openProbeRun, usableUsers } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, undocumented, undocumentedMap } from "../fixtures/probe-harness.ts";

// A shop whose checkout form is sent by the page's script (no action, so the map knows it from the source
// only): the handler wants the price the page shows, an email an old "two or three letter TLD" pattern
// accepts, and shows the purchase on a page beside the checkout, not above it.

let server: http.Server;
let baseUrl: string;
const purchases: Array<Record<string, string>> = [];

beforeAll(async () => {
  server = http.createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    const html = (status: number, body: string, headers: Record<string, string> = {}) =>
      response.writeHead(status, { ...headers, "content-type": "text/html" }).end(body);
    let text = "";
    for await (const chunk of request) text += chunk;
    if (request.method === "POST" && url.pathname === "/login")
      return html(302, "", { location: "/", "set-cookie": "sid=s3cret; Path=/; HttpOnly" });
    const signedIn = (request.headers.cookie ?? "").includes("sid=s3cret");
    if (!signedIn) return html(302, "", { location: "/login" });
    if (request.method === "POST" && url.pathname === "/shop/checkout") {
      const fields = Object.fromEntries(new URLSearchParams(text));
      if (!fields.price) return html(400, "Missing parameter 'price'");
      if (!/^[a-z0-9.+-]+@[a-z0-9]+\.[a-z]{2,3}$/.test(fields.mail ?? "")) return html(400, "Invalid mail");
      purchases.push(fields);
      return html(200, "Purchased");
    }
    if (url.pathname === "/shop/purchases")
      return html(200, `<ul>${purchases.map((row) => `<li>${row.address}</li>`).join("")}</ul>`);
    return html(200, "<h1>Shop</h1>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function shopMap(options: { documentsPrice: boolean } = { documentsPrice: true }): SystemMap {
  const checkout: Operation = {
    ...undocumented("POST", "/shop/checkout", ["source"]),
    request_body: {
      content_type: "application/x-www-form-urlencoded",
      required: true,
      schema: {
        type: "object",
        properties: {
          ...(options.documentsPrice ? { price: { type: "string", default: "34€" } } : {}),
          mail: { type: "string", format: "email" },
          address: { type: "string" },
        },
        required: ["mail", "address"],
      },
    },
  };
  return undocumentedMap("shop", baseUrl, [
    undocumented("GET", "/shop/catalogue", ["link"]),
    undocumented("GET", "/shop/purchases", ["link"]),
    checkout,
  ]);
}

function shopProfile() {
  process.env.SHOP_ALICE_PW = "alice-password";
  return profileFor({
    name: "shop",
    source: {},
    environment: { mode: "managed", base_url: baseUrl },
    auth: {
      login: {
        kind: "form",
        endpoint: "POST /login",
        body: { username: "{username}", password: "{password}" },
        token_from: "cookie:sid",
        apply_as: "cookie:sid",
      },
    },
    users: [{ name: "alice", role: "member", username: "alice", password: "secret_ref:SHOP_ALICE_PW" }],
  });
}

describe("CSRF on a checkout a script submits", () => {
  it("adds a field the handler says is missing and nothing documents, then finds the purchase", async () => {
    const map = shopMap({ documentsPrice: false });
    const run = openProbeRun(
      probeContext({ profile: shopProfile(), map, agent: "AUDITOR" }),
      "check_authentication",
    );
    if (typeof run === "string") throw new Error(run);
    const before = purchases.length;
    const { candidates, stats } = await checkCsrf(run, await usableUsers(run), map.operations);
    expect(stats.forged["POST /shop/checkout"]).toBe("form-without-token: accepted and applied");
    expect(candidates.map((candidate) => candidate.location.value)).toEqual(["POST /shop/checkout"]);
    expect(purchases.slice(before)[0]?.price).toBeTruthy();
  });

  it("sends the page's own values and a widely accepted email, and finds the purchase on the page beside it", async () => {
    const profile = shopProfile();
    const map = shopMap();
    const before = purchases.length;
    const run = openProbeRun(probeContext({ profile, map, agent: "AUDITOR" }), "check_authentication");
    if (typeof run === "string") throw new Error(run);
    const { candidates, stats } = await checkCsrf(run, await usableUsers(run), map.operations);
    expect(stats.forged["POST /shop/checkout"]).toBe("form-without-token: accepted and applied");
    expect(candidates.map((candidate) => candidate.location.value)).toEqual(["POST /shop/checkout"]);
    expect(purchases[before]).toMatchObject({ price: "34€" });
  });
});

import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import { checkMisconfiguration } from "../../src/probes/auditor/misconfiguration.ts";
import { openProbeRun } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";

// One small site in two variants. The vulnerable one serves its .env and .git/config, lists a folder,
// answers a debug route with its configuration, reflects any Origin with credentials and sends HTML
// without security headers. The safe one answers 200 with its index page for every unknown path (the
// classic false positive of a status-based check), has an ordinary page of links, an allow-listed CORS
// policy, a debug route that says only "ok", and sets the headers.

const SECRET = "9f8e7d6c5b4a39281706f5e4d3c2b1a0";
const INDEX = "<!doctype html><html><head><title>Shop</title></head><body><h1>Shop</h1></body></html>";

function site(vulnerable: boolean): http.Server {
  return http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    const origin = request.headers.origin;
    const headers: Record<string, string> = {};
    if (vulnerable && origin) {
      headers["access-control-allow-origin"] = origin;
      headers["access-control-allow-credentials"] = "true";
    }
    if (!vulnerable) {
      if (origin === "https://shop.example") {
        headers["access-control-allow-origin"] = origin;
        headers["access-control-allow-credentials"] = "true";
      }
      headers["content-security-policy"] = "default-src 'self'; frame-ancestors 'none'";
      headers["x-content-type-options"] = "nosniff";
      headers["x-frame-options"] = "DENY";
    }
    const send = (status: number, type: string, body: string) => {
      response.writeHead(status, { ...headers, "content-type": type });
      response.end(body);
    };
    if (url.pathname === "/api/login" && request.method === "POST")
      return send(200, "application/json", JSON.stringify({ token: "fixture-token-1" }));
    if (url.pathname === "/api/orders")
      return request.headers.authorization === "Bearer fixture-token-1"
        ? send(200, "application/json", JSON.stringify([{ id: 1 }]))
        : send(401, "application/json", JSON.stringify({ error: "sign in" }));
    if (url.pathname === "/debug/settings")
      return vulnerable
        ? send(
            200,
            "application/json",
            JSON.stringify({ debug: true, secret_key: SECRET, database_url: "sqlite:///shop.db" }),
          )
        : send(200, "application/json", JSON.stringify({ status: "ok" }));
    if (vulnerable && url.pathname === "/.env")
      return send(
        200,
        "text/plain",
        `APP_ENV=production\nAPP_SECRET_KEY=${SECRET}\nDB_PASSWORD=hunter2hunter2\n`,
      );
    if (vulnerable && url.pathname === "/.git/config")
      return send(
        200,
        "text/plain",
        '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n[remote "origin"]\n\turl = https://git.example/shop.git\n',
      );
    if (url.pathname === "/uploads/")
      return vulnerable
        ? send(
            200,
            "text/html",
            '<html><head><title>Index of /uploads/</title></head><body><h1>Index of /uploads/</h1><ul><li><a href="../">../</a></li><li><a href="invoice-1.pdf">invoice-1.pdf</a></li><li><a href="notes.txt">notes.txt</a></li></ul></body></html>',
          )
        : send(
            200,
            "text/html",
            '<html><head><title>Uploads</title></head><body><h1>Your uploads</h1><a href="/">Home</a> <a href="/help">Help</a></body></html>',
          );
    // A listing whose files are not served: the names alone are the disclosure.
    if (vulnerable && url.pathname === "/exports/")
      return send(
        200,
        "text/html",
        '<html><head><title>Index of /exports/</title></head><body><h1>Index of /exports/</h1><a href="payroll-2024.csv">payroll-2024.csv</a></body></html>',
      );
    if (vulnerable && url.pathname === "/uploads/notes.txt")
      return send(200, "text/plain", "remember the milk");
    if (vulnerable && url.pathname === "/uploads/invoice-1.pdf")
      return send(200, "application/pdf", "%PDF-1.4");
    // Everything else: the index page (a single-page app's fallback) on the safe site, 404 on the other.
    if (!vulnerable || url.pathname === "/") return send(200, "text/html", INDEX);
    return send(404, "text/plain", "not found");
  });
}

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function check(vulnerable: boolean): Promise<EnvelopeDraft[]> {
  process.env.MISCONFIG_FIXTURE_PASSWORD = "ann-pw";
  const server = site(vulnerable);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const document = {
    openapi: "3.0.3",
    info: { title: "shop", version: "1" },
    paths: {
      "/api/login": { post: { responses: { "200": { description: "a token" } } } },
      "/api/orders": { get: { responses: { "200": { description: "orders" } } } },
      "/debug/settings": { get: { responses: { "200": { description: "settings" } } } },
    },
  };
  const map = systemMapFor({
    target: "fixture-shop",
    baseUrl,
    document,
    pages: [{ path: "/uploads/", title: "uploads", links: [], forms: [], roles: [], scripts: [] } as never],
  });
  const profile = profileFor({
    name: "fixture-shop",
    source: {},
    environment: { mode: "managed", base_url: baseUrl },
    auth: { login: { kind: "json", endpoint: "POST /api/login", token_from: "body:token" } },
    users: [{ name: "ann", role: "member", password: "secret_ref:MISCONFIG_FIXTURE_PASSWORD" }],
  });
  const run = openProbeRun(probeContext({ profile, map, agent: "AUDITOR" }), "check_misconfiguration");
  if (typeof run === "string") throw new Error(run);
  const { candidates } = await checkMisconfiguration(run, {});
  for (const candidate of candidates) EnvelopeDraftSchema.parse(candidate);
  return candidates;
}

const kinds = (candidates: EnvelopeDraft[]) =>
  [
    ...new Set(
      candidates.map((candidate) => `${candidate.dedupe?.discriminator} ${candidate.location.value}`),
    ),
  ].sort();

describe("check_misconfiguration on a small site", () => {
  it("reports the exposed files, the listing, the debug settings, the CORS reflection and the headers", async () => {
    const found = kinds(await check(true));
    expect(found).toEqual(
      expect.arrayContaining([
        "exposed-file GET /.env",
        "exposed-file GET /.git/config",
        "debug-endpoint GET /debug/settings",
        "directory-listing GET /uploads/",
        "directory-listing GET /exports/",
        "cors GET /api/orders",
      ]),
    );
    expect(found.some((kind) => kind.startsWith("security-headers"))).toBe(true);
    expect(found.filter((kind) => kind.startsWith("exposed-file"))).toEqual([
      "exposed-file GET /.env",
      "exposed-file GET /.git/config",
    ]);
  }, 60_000);

  it("reports nothing on the safe twin, whose fallback answers 200 with its index page for any path", async () => {
    expect(kinds(await check(false))).toEqual([]);
  }, 60_000);
});

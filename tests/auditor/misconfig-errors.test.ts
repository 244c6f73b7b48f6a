import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import { decodeCharacterReferences } from "../../src/probes/auditor/exposure-errors.ts";
import { checkVerboseErrors, provokingValues } from "../../src/probes/auditor/misconfig-errors.ts";
import { openProbeRun, usableUsers } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";

// A small site whose list divides by its page size and whose report puts the sort key into SQL. The
// vulnerable twin's error handler answers with the Python traceback (an HTML page escaping its quotes as
// `&#34;`, and a JSON `detail`); the safe twin fails the same way but answers a generic message. Both have
// a help page that quotes a traceback on purpose, with a 200: an example in documentation is no error.

const TRACE = [
  "Traceback (most recent call last):",
  '  File "/srv/shop/app.py", line 41, in list_items',
  "    pages = total // limit",
  '  File "/srv/shop/paging.py", line 7, in pages',
  "    return total // size",
  "ZeroDivisionError: integer division or modulo by zero",
].join("\n");

function site(vulnerable: boolean): http.Server {
  return http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    const send = (status: number, type: string, body: string) => {
      response.writeHead(status, { "content-type": type });
      response.end(body);
    };
    const escaped = TRACE.replace(/"/g, "&#34;");
    if (url.pathname === "/items") {
      const limit = Number(url.searchParams.get("limit") ?? "10");
      if (limit === 0)
        return vulnerable
          ? send(500, "text/html", `<html><body><h1>Error</h1><pre>${escaped}</pre></body></html>`)
          : send(500, "text/html", "<html><body><h1>Something went wrong</h1></body></html>");
      return send(200, "text/html", "<html><body><ul><li>pen</li></ul></body></html>");
    }
    if (url.pathname === "/api/report") {
      const sort = url.searchParams.get("sort") ?? "name";
      if (sort.includes("'"))
        return send(
          500,
          "application/json",
          JSON.stringify(vulnerable ? { error: "failed", detail: TRACE } : { error: "failed" }),
        );
      return send(200, "application/json", JSON.stringify([{ name: "pen" }]));
    }
    if (url.pathname === "/help")
      return send(
        200,
        "text/html",
        `<html><body><p>An example error:</p><pre>${escaped}</pre></body></html>`,
      );
    return send(404, "text/plain", "not found");
  });
}

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function check(vulnerable: boolean): Promise<EnvelopeDraft[]> {
  const server = site(vulnerable);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const query = (name: string, type: string) => ({ name, in: "query", schema: { type } });
  const document = {
    openapi: "3.0.3",
    info: { title: "shop", version: "1" },
    paths: {
      "/items": {
        get: { parameters: [query("limit", "integer")], responses: { "200": { description: "ok" } } },
      },
      "/api/report": {
        get: { parameters: [query("sort", "string")], responses: { "200": { description: "ok" } } },
      },
      "/help": {
        get: { parameters: [query("topic", "string")], responses: { "200": { description: "ok" } } },
      },
    },
  };
  const map = systemMapFor({ target: "fixture-shop", baseUrl, document });
  const profile = profileFor({
    name: "fixture-shop",
    source: {},
    environment: { mode: "managed", base_url: baseUrl },
  });
  const run = openProbeRun(probeContext({ profile, map, agent: "AUDITOR" }), "check_misconfiguration");
  if (typeof run === "string") throw new Error(run);
  const found = await checkVerboseErrors(run, await usableUsers(run), { errors_provoked: 0 });
  for (const candidate of found) EnvelopeDraftSchema.parse(candidate);
  return found;
}

describe("verbose server errors", () => {
  it("reports the traceback the error handler sends, once, at both operations that showed it", async () => {
    const found = await check(true);
    expect(found).toHaveLength(1);
    const finding = found[0]!;
    expect(finding.defect_class).toBe("misconfiguration");
    expect(finding.title).toContain("Python traceback");
    const related = finding.location.related ?? [];
    const places = [finding.location.value, ...related.map((place) => place.value)].sort();
    expect(places).toEqual(["GET /api/report", "GET /items"]);
  }, 60_000);

  it("reports nothing when the same failures answer a generic message, nor for a trace quoted in a normal page", async () => {
    expect(await check(false)).toEqual([]);
  }, 60_000);

  it("provokes counts with zero, negative and huge values and text with quotes", () => {
    expect(provokingValues({ name: "per_page", schema: { type: "string" } })).toContain("0");
    expect(
      provokingValues({ name: "q", schema: { type: "string" } }).every((value) => value.includes("'")),
    ).toBe(true);
    expect(decodeCharacterReferences("File &#34;a.py&#x22;, line 3")).toBe('File "a.py", line 3');
  });
});

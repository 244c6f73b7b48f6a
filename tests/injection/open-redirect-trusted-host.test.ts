import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import type { Operation } from "../../src/map/system-map.ts";
import { hostLiterals } from "../../src/probes/injection/trusted-hosts.ts";
import { injectionTools } from "../../src/tools/servers/injection-server.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import { callTool } from "../support/fake-run-context.ts";

// Redirect checks that only ask whether the application's own production host appears in the address,
// beside their safe look-alikes: an exact host match and relative paths only. The production host is
// not the host the test reaches, so the probe must learn it from the handlers' source.

const TRUSTED = "app.fixture.test";

const SOURCE = `from flask import redirect, request

def go_contains():
    target = request.args.get("url", "/")
    if "${TRUSTED}" not in target:
        target = "/"
    return redirect(target)


def go_prefix():
    target = request.args.get("next", "/")
    if not target.startswith("https://${TRUSTED}"):
        target = "/"
    return redirect(target)


def go_exact():
    target = request.args.get("url", "/")
    parsed = urlparse(target)
    if not (is_local_path(target) or (parsed.scheme == "https" and parsed.netloc == "${TRUSTED}")):
        target = "/"
    return redirect(target)


def go_relative():
    target = request.args.get("next", "/")
    if not is_local_path(target):
        target = "/"
    return redirect(target)


def go_resolved():
    return django_redirect(request.args.get("next", "/"))


def go_resolved_local():
    target = request.args.get("next", "/")
    if not is_local_path(target):
        target = "/"
    return django_redirect(target)
`;

/** A path on this site: one leading slash, no second slash or backslash after it. */
function isLocalPath(target: string): boolean {
  return /^\/(?![/\\])/.test(target) && !target.includes("\\");
}

function exactHost(target: string): boolean {
  try {
    const url = new URL(target);
    return url.protocol === "https:" && url.host === TRUSTED && !url.username && !url.password;
  } catch {
    return false;
  }
}

// Django's redirect() reverse-resolves a value with neither a slash nor a dot as a view name: a plain word
// (the probe's baseline) crashes the handler with a 500, while an address is redirected to.
const ROUTES: Record<
  string,
  { parameter: string; allowed: (target: string) => boolean; line: number; resolvesNames?: boolean }
> = {
  "/go/contains": { parameter: "url", allowed: (target) => target.includes(TRUSTED), line: 3 },
  "/go/prefix": {
    parameter: "next",
    allowed: (target) => target.startsWith(`https://${TRUSTED}`),
    line: 10,
  },
  "/go/exact": {
    parameter: "url",
    allowed: (target) => isLocalPath(target) || exactHost(target),
    line: 17,
  },
  "/go/relative": { parameter: "next", allowed: isLocalPath, line: 25 },
  "/go/resolved": { parameter: "next", allowed: () => true, line: 32, resolvesNames: true },
  "/go/resolved-local": { parameter: "next", allowed: isLocalPath, line: 36, resolvesNames: true },
};

let server: http.Server;
let baseUrl: string;
let root: string;

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-redirect-"));
  fs.writeFileSync(path.join(root, "app.py"), SOURCE);
  server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    const route = ROUTES[url.pathname];
    if (!route) return void response.writeHead(404).end();
    const wanted = url.searchParams.get(route.parameter) ?? "/";
    if (route.resolvesNames && !/[/.]/.test(wanted))
      return void response.writeHead(500).end("NoReverseMatch");
    response.writeHead(302, { location: route.allowed(wanted) ? wanted : "/" }).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  fs.rmSync(root, { recursive: true, force: true });
});

function operationFor(pathname: string): Operation {
  const route = ROUTES[pathname]!;
  return {
    method: "GET",
    path: pathname,
    security: "unknown",
    parameters: [{ name: route.parameter, in: "query", required: false, schema: { type: "string" } }],
    responses: {},
    seen_in: ["source"],
    documented: false,
    handler: { file: "app.py", line: route.line, framework: "flask" },
  } as Operation;
}

async function probe(): Promise<EnvelopeDraft[]> {
  const profile = profileFor({
    name: "redirect-fixture",
    source: {},
    environment: { mode: "managed", base_url: baseUrl, allow_writes: true },
  });
  const map = systemMapFor({
    target: "redirect-fixture",
    baseUrl,
    document: { openapi: "3.0.3", info: { title: "none", version: "1" }, paths: {} },
    extraOperations: Object.keys(ROUTES).map(operationFor),
  });
  const context = probeContext({ profile, map, root, agent: "AUDITOR" });
  const definition = injectionTools.find((candidate) => candidate.name === "probe_open_redirect")!;
  const result = await callTool(definition, {}, context);
  if (!result.ok) throw new Error(result.error);
  return (result.data as { candidates: EnvelopeDraft[] }).candidates;
}

describe("open redirect behind a check that the trusted host appears somewhere", () => {
  it("reads host names from source literals, not file or module names", () => {
    expect(
      hostLiterals(`x = "${TRUSTED}"; y = 'https://api.other.test/'; z = "app.py"; w = "os.path"`),
    ).toEqual([TRUSTED, "api.other.test"]);
  });

  it("flags contains and starts-with checks, and leaves exact-host and relative-only checks alone", async () => {
    const candidates = await probe();
    const flagged = candidates.map((candidate) => candidate.title);
    expect(flagged).toHaveLength(3);
    // A handler that crashes on the plain word of the baseline still redirects to an address it is given.
    expect(flagged).toContainEqual(expect.stringMatching(/GET \/go\/resolved \(/));
    expect(flagged).toContainEqual(expect.stringMatching(/GET \/go\/contains .*trusted app\.fixture\.test/));
    expect(flagged).toContainEqual(expect.stringMatching(/GET \/go\/prefix .*trusted app\.fixture\.test/));
    for (const candidate of candidates) {
      expect(candidate.defect_class).toBe("open-redirect");
      const locations = candidate.evidence
        .filter((item) => item.kind === "exchange")
        .map((item) => JSON.stringify(item));
      expect(locations.length).toBeGreaterThanOrEqual(2);
    }
  });
});

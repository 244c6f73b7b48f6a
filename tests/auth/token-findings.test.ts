import { describe, expect, it } from "vitest";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import type { SystemMap } from "../../src/map/system-map.ts";
import { buildRequest } from "../../src/probes/api/request-builder.ts";
import { forgeryFindings } from "../../src/probes/auth/token-findings.ts";
import type { OperationVerdict, TechniqueKind } from "../../src/probes/auth/token-forgery.ts";
import type { HttpExchange } from "../../src/probes/http/http-types.ts";
import { openProbeRun } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, undocumented } from "../fixtures/probe-harness.ts";

// How verdicts become findings: a forgery several operations take is one flaw of token verification,
// located at the caller's own record; a forgery one operation takes is that operation's own finding.

const BASE = "http://127.0.0.1:9";

function exchange(path: string, status: number): HttpExchange {
  return {
    request: { method: "GET", url: `${BASE}${path}`, headers: {} },
    response: { status, headers: {}, setCookies: [], body: "{}", contentType: "application/json", json: {} },
    durationMs: 1,
    user: "alice",
  } as unknown as HttpExchange;
}

function verdict(path: string, kinds: readonly TechniqueKind[]): OperationVerdict {
  const operation = undocumented("GET", path);
  return {
    operation,
    prepared: buildRequest(operation, { seed: "seed" }),
    ownerAnswer: exchange(path, 200),
    anonymous: exchange(path, 401),
    accepted: kinds.map((kind) => ({
      kind,
      label: kind,
      subject: "bob",
      impersonation: true,
      forgery: { from: "alice", kind: kind === "expired" ? "expired" : "alg-none" },
      exchange: exchange(path, 200),
      confirm: exchange(path, 200),
      control: exchange(path, 401),
      rightful: exchange(path, 200),
    })),
  };
}

function run() {
  const map = { operations: [], pages: [] } as unknown as SystemMap;
  const profile = profileFor({
    name: "tokens",
    source: {},
    environment: { mode: "managed", base_url: BASE },
  });
  const opened = openProbeRun(probeContext({ profile, map, agent: "AUDITOR" }), "check_authentication");
  if (typeof opened === "string") throw new Error(opened);
  return opened;
}

describe("token forgery findings", () => {
  it("reports a forgery three operations take once, at the caller's own record, and the rest apart", () => {
    const findings = forgeryFindings(run(), [
      verdict("/api/projects", ["alg-none"]),
      verdict("/api/tasks", ["alg-none", "expired"]),
      verdict("/api/me", ["alg-none"]),
      verdict("/api/reports", []),
    ]);
    for (const finding of findings) EnvelopeDraftSchema.parse(finding);
    expect(findings.map((finding) => finding.location.value)).toEqual(["GET /api/me", "GET /api/tasks"]);
    expect(findings[0]?.title).toContain("alg-none");
    expect(findings[1]?.title).toContain("expired");
    expect(findings[1]?.title).not.toContain("alg-none");
  });

  it("keeps one finding per operation when each takes its own forgery", () => {
    const findings = forgeryFindings(run(), [
      verdict("/api/projects", ["alg-none"]),
      verdict("/api/tasks", ["expired"]),
      verdict("/api/me", []),
    ]);
    expect(findings.map((finding) => finding.location.value)).toEqual([
      "GET /api/projects",
      "GET /api/tasks",
    ]);
  });
});

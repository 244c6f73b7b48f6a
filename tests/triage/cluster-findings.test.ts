import { describe, expect, it } from "vitest";
import { type DefectEnvelope, fingerprint } from "../../src/envelope/envelope.ts";
import type { Operation } from "../../src/map/system-map.ts";
import { operationIdentity } from "../../src/probes/api/operation-index.ts";
import { pointPlace, pointTag } from "../../src/probes/auditor/input-points.ts";
import { clusterFindings } from "../../src/triage/cluster-findings.ts";
import { envelope } from "../score/fixtures.ts";

// Findings a probe wrote about one endpoint: alike in wording (the same request line in every evidence item),
// apart in what they found. The clustering must keep different checks apart and join one flaw's inputs.

function finding(id: string, title: string, defectClass: string, discriminator?: string): DefectEnvelope {
  const base = envelope({ id, defect_class: defectClass, value: "POST /graphql" });
  return {
    ...base,
    title,
    evidence: [{ kind: "note", description: "POST http://127.0.0.1:5013/graphql as anonymous → 200" }],
    dedupe: { fingerprint: fingerprint({ ...base, dedupe: { discriminator } }), discriminator },
  };
}

const ticketsOf = (findings: DefectEnvelope[]) =>
  clusterFindings(findings)
    .map((cluster) => cluster.members.map((member) => member.id).sort())
    .sort((a, b) => a[0]!.localeCompare(b[0]!));

describe("clustering findings of one endpoint", () => {
  it("keeps different checks and different GraphQL fields apart, and joins one field's inputs", () => {
    const findings = [
      finding(
        "cmd-host",
        "OS command injection in argument host of mutation importData",
        "injection",
        "command:body:host@importData",
      ),
      finding(
        "cmd-path",
        "OS command injection in argument path of mutation importData",
        "injection",
        "command:body:path@importData",
      ),
      finding(
        "cmd-arg",
        "OS command injection in argument arg of query debug",
        "injection",
        "command:body:arg@debug",
      ),
      finding("sqli", "SQL injection in argument filter of query items", "injection", "body:filter@items"),
      finding(
        "batch",
        "GraphQL endpoint /graphql executes batched operations without a limit",
        "misconfiguration",
        "graphql-batching",
      ),
      finding(
        "depth",
        "GraphQL endpoint /graphql accepts circular queries 10 levels deep",
        "misconfiguration",
        "graphql-depth",
      ),
    ];
    expect(ticketsOf(findings)).toEqual([
      ["batch"],
      ["cmd-arg"],
      ["cmd-host", "cmd-path"],
      ["depth"],
      ["sqli"],
    ]);
  });

  it("still joins a finding without a discriminator to a like one (two agents telling one defect)", () => {
    const findings = [
      finding("a", "Open redirect through query next of GET /login", "open-redirect", "redirect:query:next"),
      finding("b", "Open redirect through query next of GET /login", "open-redirect"),
    ];
    expect(ticketsOf(findings)).toEqual([["a", "b"]]);
  });

  it("names GraphQL inputs by field and argument, and REST inputs by where they travel", () => {
    const rest = { method: "POST", path: "/api/items" } as Operation;
    const graphql = {
      method: "POST",
      path: "/graphql",
      graphql: { kind: "mutation", field: "importData", arguments: [], selection: "" },
    } as unknown as Operation;
    expect(pointPlace({ operation: rest, in: "body", name: "host" })).toBe("body host");
    expect(pointTag({ operation: rest, in: "body", name: "host" })).toBe("body:host");
    expect(pointPlace({ operation: graphql, in: "body", name: "host" })).toBe(
      "argument host of mutation importData",
    );
    expect(pointTag({ operation: graphql, in: "body", name: "host" })).toBe("body:host@importData");
    expect(operationIdentity(graphql)).toBe("POST /graphql mutation importData");
    expect(operationIdentity(rest)).toBe("POST /api/items");
  });
});

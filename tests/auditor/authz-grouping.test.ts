import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Operation } from "../../src/map/system-map.ts";
import { group } from "../../src/probes/auditor/authz-findings.ts";
import type { Leak } from "../../src/probes/auditor/authz-support.ts";
import type { HttpExchange } from "../../src/probes/http/http-types.ts";
import type { NotesServer } from "../fixtures/notes-server.ts";
import type { FixtureTarget } from "../fixtures/targets.ts";
import { notesTarget } from "../fixtures/targets.ts";

// One finding per operation lists every person who got through, each once: the same outsider caught by
// two techniques (a write that changed the record, a no-op write the owner's view confirmed) is one name.

let notes: FixtureTarget<NotesServer>;
beforeAll(async () => {
  notes = await notesTarget();
});
afterAll(() => notes.server.close());

function exchange(url: string, status: number): HttpExchange {
  return {
    sequence: 1,
    started_at: new Date(0).toISOString(),
    duration_ms: 1,
    request: { method: "PATCH", url, headers: {} },
    response: { status, headers: {}, body: "{}", contentType: "application/json", setCookies: [] },
  } as unknown as HttpExchange;
}

describe("authorization findings", () => {
  it("name each outsider once, however many techniques caught them", () => {
    const { run } = notes.run("authz_matrix");
    const operation = { method: "PATCH", path: "/api/notes/{noteId}" } as Operation;
    const leak = (action: Leak["action"]): Leak => ({
      operation,
      principal: { user: { name: "carol", role: "member" }, relation: "other-tenant" } as Leak["principal"],
      action,
      ownerExchange: exchange(`${notes.server.baseUrl}/api/notes/1`, 200),
      otherExchange: exchange(`${notes.server.baseUrl}/api/notes/1`, 200),
      steps: [],
      assertion: { kind: "status_in", step: "other", values: [401, 403, 404], message: "refused" },
      owner: "alice",
    });
    const [finding] = group(run, [leak("update"), leak("action")]);
    expect(finding!.title).toBe("PATCH /api/notes/{noteId} lets carol (other-tenant) change alice's data");
  });
});

import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpRequestTool, signInTool } from "../../src/tools/servers/http-server.ts";
import type { NotesServer } from "../fixtures/notes-server.ts";
import type { FixtureTarget } from "../fixtures/targets.ts";
import { notesTarget } from "../fixtures/targets.ts";
import { callTool } from "../support/fake-run-context.ts";

let notes: FixtureTarget<NotesServer>;

beforeAll(async () => {
  notes = await notesTarget();
});
afterAll(async () => {
  await notes.server.close();
});

describe("http tools", () => {
  it("http_request sends as a signed-in user, answers a masked excerpt and records the masked exchange", async () => {
    const context = notes.context();
    const result = await callTool(httpRequestTool, { path: "/api/me", user: "alice" }, context);
    if (!result.ok) throw new Error(result.error);
    const data = result.data as { status: number; body_excerpt: string; artifact: string; user: string };
    expect(data.status).toBe(200);
    expect(data.user).toBe("alice");
    expect(data.body_excerpt).toContain('"username": "alice"');
    expect(data.body_excerpt).not.toContain("u7Q1n0S2x9cQ0kqGJ1t0ZK8b5mVNQeWa");
    const recorded = fs.readFileSync(
      path.join(context.artifactsDir, data.artifact.replace(/^artifact:\/\/[^/]+\//, "")),
      "utf8",
    );
    expect(recorded).toMatch(/"authorization": "Bearer [0-9a-f]{1,8}…\[masked \d+ chars\]"/);
    expect(
      httpRequestTool.actions!({ method: "DELETE", path: "/api/notes/1", max_body_chars: 10 }, context),
    ).toEqual([{ kind: "http_request", method: "DELETE", url: `${notes.server.baseUrl}/api/notes/1` }]);
  });

  it("http_request refuses other hosts and writes to an external target without allow_writes", async () => {
    const context = notes.context({ mode: "external" });
    const elsewhere = await callTool(httpRequestTool, { path: "http://203.0.113.9/admin" }, context);
    expect(elsewhere).toMatchObject({ ok: false, error: expect.stringMatching(/not on the target/) });
    const write = await callTool(
      httpRequestTool,
      { method: "POST", path: "/api/tags", user: "alice", body: { name: "x" } },
      context,
    );
    expect(write).toMatchObject({ ok: false, error: expect.stringMatching(/does not allow writes/) });
  });

  it("sign_in signs every user in once and names the user and step of a failure", async () => {
    const context = notes.context();
    const result = await callTool(signInTool, {}, context);
    if (!result.ok) throw new Error(result.error);
    expect(
      (result.data as { sessions: Array<{ user: string; signed_in: boolean }> }).sessions.map(
        (session) => `${session.user}:${session.signed_in}`,
      ),
    ).toEqual(["alice:true", "bob:true", "carol:true", "root:true"]);
    const saved = process.env.NOTES_BOB_PASSWORD;
    process.env.NOTES_BOB_PASSWORD = "wrong";
    const again = await callTool(signInTool, { user: "bob", force: true }, notes.context());
    process.env.NOTES_BOB_PASSWORD = saved;
    expect(again).toMatchObject({
      ok: false,
      error: expect.stringMatching(/sign-in as user "bob" failed at step "request"/),
    });
  });
});

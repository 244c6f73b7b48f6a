import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpTools } from "../../src/tools/servers/http-server.ts";
import type { NotesServer } from "../fixtures/notes-server.ts";
import { notesDocument, startNotesServer } from "../fixtures/notes-server.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";

// A profile whose sign-in works but whose credential goes where the application does not read it (a
// bearer token sent as X-Token): every probe would run as a stranger. sign_in says so, naming the setting.

let server: NotesServer;
beforeAll(async () => {
  server = await startNotesServer();
  process.env.NOTES_ALICE_PASSWORD = "alice-pw";
});
afterAll(async () => {
  await server.close();
});

async function signInWith(applyAs: string) {
  const profile = profileFor({
    name: "notes",
    source: {},
    environment: { mode: "external", base_url: server.baseUrl },
    auth: {
      login: { kind: "json", endpoint: "POST /api/login", token_from: "body:token", apply_as: applyAs },
    },
    users: [{ name: "alice", role: "member", password: "secret_ref:NOTES_ALICE_PASSWORD" }],
  });
  const map = systemMapFor({ target: "notes", baseUrl: server.baseUrl, document: notesDocument });
  const signIn = httpTools.find((tool) => tool.name === "sign_in");
  if (!signIn) throw new Error("no sign_in tool");
  const answer = await signIn.run({}, probeContext({ profile, map, agent: "AUDITOR" }));
  if (!answer.ok) throw new Error(answer.error);
  return answer.data as { errors: Record<string, string>; warnings: Record<string, string> };
}

describe("sign_in and a credential the application does not read", () => {
  it("warns when a protected read refuses the signed-in user exactly as it refuses a stranger", async () => {
    const { errors, warnings } = await signInWith("header:X-Token");
    expect(errors).toEqual({});
    expect(warnings.alice).toMatch(/GET \/api\/notes answers 401 to alice .*auth\.apply_as header:X-Token/);
  });

  it("says nothing when the credential is where the application reads it", async () => {
    const { warnings } = await signInWith("header:Authorization");
    expect(warnings).toEqual({});
  });
});

import { buildSchema } from "graphql";
import { afterEach, describe, expect, it } from "vitest";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import { checkAuthentication } from "../../src/probes/auth/check-authentication.ts";
import { openProbeRun } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor } from "../fixtures/probe-harness.ts";
import { graphqlSystemMap, serveGraphql } from "./graphql-http.ts";

// A GraphQL API whose sign-in is a mutation on the shared endpoint: the unlimited variant answers every
// wrong password alike for ever; the guarded one locks the account name after five failures.

const SDL = `
type Query { notes: [String!]! }
type Mutation {
  login(username: String!, password: String!): Session
  addNote(text: String!): String
}
type Session { accessToken: String }
`;
const PASSWORD = "correct-horse-battery";

async function startServer(lockAfter?: number): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  const schema = buildSchema(SDL);
  const failures = new Map<string, number>();
  const root = {
    notes: () => ["a"],
    addNote: ({ text }: { text: string }) => text,
    login: ({ username, password }: { username: string; password: string }) => {
      const failed = failures.get(username) ?? 0;
      if (lockAfter !== undefined && failed >= lockAfter)
        throw new Error("Too many attempts: account locked");
      if (username === "ada" && password === PASSWORD) return { accessToken: `token-${Date.now()}` };
      failures.set(username, failed + 1);
      throw new Error("Authentication failure");
    },
  };
  return serveGraphql(schema, root);
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function check(lockAfter?: number) {
  const server = await startServer(lockAfter);
  closers.push(server.close);
  process.env.GQL_SIGN_IN_ADA_PW = PASSWORD;
  const map = graphqlSystemMap("fixture-graphql-sign-in", server.baseUrl, SDL);
  const profile = profileFor({
    name: "fixture-graphql-sign-in",
    source: {},
    environment: { mode: "managed", base_url: server.baseUrl },
    auth: {
      login: {
        kind: "json",
        endpoint: "POST /graphql",
        body: { query: 'mutation { login(username: "{username}", password: "{password}") { accessToken } }' },
        token_from: "body:data.login.accessToken",
      },
    },
    users: [{ name: "ada", role: "user", username: "ada", password: "secret_ref:GQL_SIGN_IN_ADA_PW" }],
  });
  const run = openProbeRun(probeContext({ profile, map, agent: "AUDITOR" }), "check_authentication");
  if (typeof run === "string") throw new Error(run);
  const outcome = await checkAuthentication(run, { checks: ["brute-force"] });
  for (const candidate of outcome.candidates) EnvelopeDraftSchema.parse(candidate);
  return outcome;
}

describe("a GraphQL sign-in mutation as a credential operation", () => {
  it("is the profile's sign-in, and unlimited password guessing at it is reported", async () => {
    const { candidates, stats } = await check();
    expect(stats.credential_operations).toEqual(["POST /graphql (sign-in; account field username)"]);
    expect(candidates.map((candidate) => `${candidate.defect_class} ${candidate.location.value}`)).toEqual([
      "broken-authentication POST /graphql",
    ]);
  });

  it("leaves a sign-in that locks the account name after a few failures alone", async () => {
    const { candidates, stats } = await check(5);
    expect(stats.credential_operations).toEqual(["POST /graphql (sign-in; account field username)"]);
    expect(candidates).toEqual([]);
  });
});

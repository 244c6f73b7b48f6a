import { createHmac } from "node:crypto";
import { buildSchema } from "graphql";
import { afterEach, describe, expect, it } from "vitest";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import { composeInventory } from "../../src/map/inventory.ts";
import { checkGraphql } from "../../src/probes/graphql/check-graphql.ts";
import { operationsFromSchema } from "../../src/probes/graphql/schema-operations.ts";
import { schemaFromSdl } from "../../src/probes/graphql/sdl-schema.ts";
import { tokenArgumentOperations } from "../../src/probes/graphql/token-argument-check.ts";
import { openProbeRun } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor } from "../fixtures/probe-harness.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";
import { generatedTests } from "./generated-tests.ts";
import { graphqlSystemMap, serveGraphql } from "./graphql-http.ts";

// A GraphQL API whose `viewer(token:)` reads the caller from a JWT argument: the vulnerable variant decodes
// the payload without checking the signature, the safe one verifies its HMAC first.

const SDL = `
type Query {
  viewer(token: String): Account
  pastes(limit: Int): [String!]!
}
type Mutation {
  login(username: String!, password: String!): Session
}
type Session { accessToken: String }
type Account { name: String role: String password: String }
`;
const SECRET = "fixture-signing-key-9d1f";
const ACCOUNTS: Record<string, { password: string; role: string }> = {
  ada: { password: "ada-password", role: "user" },
  root: { password: "root-password", role: "admin" },
};

const segment = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
function sign(subject: string): string {
  const body = `${segment({ alg: "HS256", typ: "JWT" })}.${segment({ sub: subject, iat: 1_700_000_000 })}`;
  return `${body}.${createHmac("sha256", SECRET).update(body).digest("base64url")}`;
}
function subjectOf(token: string, verify: boolean): string | undefined {
  const [header, payload, signature] = token.split(".");
  if (!header || !payload) return undefined;
  if (verify) {
    const expected = createHmac("sha256", SECRET).update(`${header}.${payload}`).digest("base64url");
    if (signature !== expected) return undefined;
  }
  try {
    return (JSON.parse(Buffer.from(payload, "base64url").toString()) as { sub?: string }).sub;
  } catch {
    return undefined;
  }
}

async function startServer(verify: boolean): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  const schema = buildSchema(SDL);
  const root = {
    viewer: ({ token }: { token?: string }) => {
      const name = token ? subjectOf(token, verify) : undefined;
      const account = name ? ACCOUNTS[name] : undefined;
      return account ? { name, role: account.role, password: account.password } : null;
    },
    pastes: () => ["a", "b"],
    login: ({ username, password }: { username: string; password: string }) =>
      ACCOUNTS[username]?.password === password ? { accessToken: sign(username) } : null,
  };
  return serveGraphql(schema, root);
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function check(verify: boolean) {
  const server = await startServer(verify);
  closers.push(server.close);
  process.env.GQL_ADA_PW = "ada-password";
  process.env.GQL_ROOT_PW = "root-password";
  const map = graphqlSystemMap("fixture-token-argument", server.baseUrl, SDL);
  const profile = profileFor({
    name: "fixture-token-argument",
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
    users: [
      { name: "ada", role: "user", username: "ada", password: "secret_ref:GQL_ADA_PW" },
      { name: "root", role: "admin", username: "root", password: "secret_ref:GQL_ROOT_PW" },
    ],
  });
  const run = openProbeRun(probeContext({ profile, map, agent: "AUDITOR" }), "check_graphql");
  if (typeof run === "string") throw new Error(run);
  const outcome = await checkGraphql(run, { checks: ["tokens"] });
  for (const candidate of outcome.candidates) EnvelopeDraftSchema.parse(candidate);
  return { ...outcome, map, context: run.context as FakeRunContext, baseUrl: server.baseUrl };
}

describe("JWT arguments of GraphQL fields", () => {
  it("picks read-only fields taking a token-named string argument", async () => {
    const schema = schemaFromSdl([{ origin: "fixture", text: SDL }])!.schema;
    const operations = composeInventory([], operationsFromSchema(schema, "/graphql"));
    expect(tokenArgumentOperations(operations).map((target) => `${target.field}:${target.argument}`)).toEqual(
      ["viewer:token"],
    );
  });

  it("reports a field that trusts the claims of an unverified token", async () => {
    const { candidates } = await check(false);
    expect(candidates.map((candidate) => candidate.dedupe?.discriminator)).toEqual([
      "graphql-token-argument:viewer",
    ]);
    expect(candidates[0]).toMatchObject({
      domain: "security",
      defect_class: "broken-authentication",
      severity: "critical",
    });
    expect(candidates[0]?.summary).toMatch(/alg "none"/);
    expect(candidates[0]?.evidence.filter((item) => item.kind === "exchange")).toHaveLength(5);
  });

  it("generates a test that fails while the field trusts a forged token, though the answer holds a password", async () => {
    const { candidates, context, baseUrl } = await check(false);
    // The answer carries the victim's password, which evidence masks: the test compares the user's name.
    const results = await generatedTests(context, candidates, baseUrl);
    expect(Object.values(results)).toEqual([false]);
  });

  it("leaves a field that verifies the signature alone", async () => {
    const { candidates, stats } = await check(true);
    expect(candidates).toEqual([]);
    expect(stats.checked).toEqual({ "/graphql": [], "(token arguments)": ["tokens"] });
  });
});

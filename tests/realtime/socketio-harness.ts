import type { SystemMap } from "../../src/map/system-map.ts";
import { TargetProfileSchema } from "../../src/targets/profile-schema.ts";
import { undocumentedMap } from "../fixtures/probe-harness.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";
import { fakeRunContext, testAgent } from "../support/fake-run-context.ts";

// A SOCKET context for the socket.io apps (Node and Flask-SocketIO share one notes API): the profile has
// no websocket section and the map no channels, so the channels can only come from the app's source.

const textSchema = {
  type: "object",
  required: ["title", "body"],
  properties: { title: { type: "string" }, body: { type: "string" } },
};

const operation = (method: string, path: string, extra: Record<string, unknown> = {}) => ({
  method,
  path,
  security: "required" as const,
  parameters: path.includes("{id}")
    ? [{ name: "id", in: "path" as const, required: true, schema: { type: "integer" } }]
    : [],
  responses: {},
  seen_in: ["source" as const],
  documented: false,
  ...extra,
});

export function notesMap(baseUrl: string): SystemMap {
  const body = { request_body: { content_type: "application/json", required: true, schema: textSchema } };
  return undocumentedMap("socketio-fixture", baseUrl, [
    operation("POST", "/api/login", { security: "public" }),
    operation("POST", "/api/notes", body),
    operation("GET", "/api/notes/{id}"),
    operation("PATCH", "/api/notes/{id}", body),
  ]);
}

export function socketIoContext(baseUrl: string, root: string): FakeRunContext {
  process.env.QAAS_SIO_ALICE_PASSWORD = "alice-pass-1";
  process.env.QAAS_SIO_BOB_PASSWORD = "bob-pass-2";
  const profile = TargetProfileSchema.parse({
    name: "socketio-fixture",
    source: {},
    environment: { mode: "external", base_url: baseUrl, allow_writes: true },
    auth: {
      login: {
        kind: "json",
        endpoint: "POST /api/login",
        body: { username: "{username}", password: "{password}" },
        token_from: "body:token",
      },
    },
    users: [
      {
        name: "alice",
        role: "member",
        tenant: "a",
        username: "alice@tenant-a.test",
        password: "secret_ref:QAAS_SIO_ALICE_PASSWORD",
      },
      {
        name: "bob",
        role: "member",
        tenant: "b",
        username: "bob@tenant-b.test",
        password: "secret_ref:QAAS_SIO_BOB_PASSWORD",
      },
    ],
  });
  return fakeRunContext({
    target: { profile, file: "/dev/null/socketio.yaml", root, goldenLedger: undefined },
    systemMap: notesMap(baseUrl),
    agent: testAgent({ name: "SOCKET" }),
  });
}

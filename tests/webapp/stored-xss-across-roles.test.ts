import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import type { Operation, Page } from "../../src/map/system-map.ts";
import { probeXssTool } from "../../src/tools/servers/security-server.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import { callTool } from "../support/fake-run-context.ts";
import type { DeskApp } from "./desk-app.ts";
import { DESK_USERS, startDeskApp } from "./desk-app.ts";

// Stored XSS across roles: a customer's booking note, written through a form guarded by a CSRF token whose
// date and slot fields must be valid, shows raw only on staff pages (the booking page found through the id
// the form redirected to, and the day sheet). The safe build escapes it there; the booking is still made.

let vulnerable: DeskApp;
let safe: DeskApp;

beforeAll(async () => {
  process.env.QAAS_TEST_DESK_PAT = DESK_USERS.pat.password;
  process.env.QAAS_TEST_DESK_SUE = DESK_USERS.sue.password;
  [vulnerable, safe] = await Promise.all([
    startDeskApp({ vulnerable: true }),
    startDeskApp({ vulnerable: false }),
  ]);
});
afterAll(async () => {
  await Promise.all([vulnerable.close(), safe.close()]);
});

function operation(method: string, path: string, extra: Partial<Operation>): Operation {
  return {
    method,
    path,
    security: "unknown",
    parameters: [],
    responses: {},
    seen_in: ["source"],
    documented: false,
    ...extra,
  };
}

const formBody = (names: string[]) => ({
  content_type: "application/x-www-form-urlencoded",
  required: true,
  schema: {
    type: "object",
    properties: Object.fromEntries(names.map((name) => [name, { type: "string" }])),
    required: names.filter((name) => name !== "note"),
  },
});

function deskOperations(): Operation[] {
  const id = { name: "id", in: "path" as const, required: true, schema: { type: "string" } };
  return [
    operation("POST", "/login", {
      roles: ["anonymous"],
      form: { page: "/login", enctype: "application/x-www-form-urlencoded", csrf_field: "csrf_token" },
      request_body: formBody(["csrf_token", "username", "password"]),
    }),
    operation("POST", "/book", {
      roles: ["customer"],
      form: { page: "/book", enctype: "application/x-www-form-urlencoded", csrf_field: "csrf_token" },
      request_body: formBody(["csrf_token", "day", "slot", "note"]),
    }),
    operation("GET", "/bookings/{id}", { roles: ["customer"], parameters: [id] }),
    operation("GET", "/staff/bookings/{id}", { roles: ["staff"], parameters: [id] }),
    operation("GET", "/staff/day", { roles: ["staff"] }),
  ];
}

function deskPages(): Page[] {
  return [
    {
      path: "/book",
      title: "Book",
      links: [],
      roles: ["customer"],
      scripts: [],
      forms: [
        {
          action: "/book",
          method: "POST",
          fields: ["csrf_token", "day", "slot", "note"],
          enctype: "application/x-www-form-urlencoded",
          inputs: [
            { name: "csrf_token", type: "hidden", required: false },
            { name: "day", type: "date", required: true },
            { name: "slot", type: "select", required: true, value: "", options: [""] },
            { name: "note", type: "textarea", required: false },
          ],
        },
      ],
    } as Page,
  ];
}

const execute = promisify(execFile);
let lastArtifacts = "";

async function probe(app: DeskApp): Promise<EnvelopeDraft[]> {
  const profile = profileFor({
    name: "desk",
    source: {},
    environment: { mode: "managed", base_url: app.baseUrl },
    auth: {
      login: {
        kind: "form",
        endpoint: "POST /login",
        body: { username: "{username}", password: "{password}" },
        token_from: "cookie:sid",
        apply_as: "cookie:sid",
      },
    },
    users: [
      { name: "pat", role: "customer", username: "pat", password: "secret_ref:QAAS_TEST_DESK_PAT" },
      { name: "sue", role: "staff", username: "sue", password: "secret_ref:QAAS_TEST_DESK_SUE" },
    ],
  });
  const map = systemMapFor({
    target: "desk",
    baseUrl: app.baseUrl,
    document: { openapi: "3.0.3", info: { title: "none", version: "0" }, paths: {} },
    extraOperations: deskOperations(),
    pages: deskPages(),
  });
  map.openapi = null;
  const context = probeContext({ profile, map, agent: "AUDITOR" });
  lastArtifacts = context.artifactsDir;
  const result = await callTool(probeXssTool, {}, context);
  if (!result.ok) throw new Error(result.error);
  const { candidates } = result.data as { candidates: EnvelopeDraft[] };
  for (const candidate of candidates) EnvelopeDraftSchema.parse(candidate);
  return candidates;
}

describe("stored XSS across roles, through a CSRF-guarded form with typed fields", () => {
  it("finds the customer's note rendered raw on a staff page", async () => {
    const found = await probe(vulnerable);
    const stored = found.filter((candidate) => candidate.title.startsWith("Stored XSS: body note"));
    expect(stored.length).toBeGreaterThan(0);
    expect(stored[0]!.title).toMatch(/POST \/book renders unescaped at \/staff\//);
    // The booking went through as a browser sends it: a real date and a time for the script-filled slot.
    const planted = vulnerable.bookings.find((booking) => booking.note.includes("<qaas-xss-"));
    expect(planted?.day).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(planted?.slot).toMatch(/^\d{2}:\d{2}$/);

    // The generated test saves its own note and reads that booking's page: it fails on a freshly started
    // (reset) app, which holds none of the probe's bookings, and passes on the build that escapes.
    const onRecordPage = stored.find((candidate) => /\/staff\/bookings\/\d+/.test(candidate.title))!;
    expect(onRecordPage).toBeDefined();
    const testUri = onRecordPage.evidence.find((item) => item.kind === "failing_test")!.uri!;
    const testFile = path.join(lastArtifacts, testUri.replace(/^artifact:\/\/[^/]+\//, ""));
    const runAgainst = (baseUrl: string) =>
      execute(process.execPath, ["--test", testFile], {
        env: { ...process.env, QAAS_BASE_URL: baseUrl },
        timeout: 20_000,
      });
    const fresh = await startDeskApp({ vulnerable: true });
    // Its records are not the probe's: the booking the probe saw at this id is someone else's here.
    fresh.bookings.push({ id: 1, user: "pat", day: "2026-01-05", slot: "09:00", note: "plain" });
    try {
      await expect(runAgainst(fresh.baseUrl)).rejects.toMatchObject({
        stdout: expect.stringContaining("user input must be HTML-escaped"),
      });
    } finally {
      await fresh.close();
    }
    await expect(runAgainst(safe.baseUrl)).resolves.toBeDefined();
  }, 60_000);

  it("leaves the build that escapes the note on staff pages alone", async () => {
    expect(await probe(safe)).toEqual([]);
    expect(safe.bookings.some((booking) => booking.note.includes("<qaas-xss-"))).toBe(true);
  }, 60_000);
});

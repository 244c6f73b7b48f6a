import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/config-errors.ts";
import { loadTarget } from "../../src/targets/load-target.ts";

// The auth part of a target profile: what it may say about sign-in, sign-up and sign-out, and how a
// mistake there is reported (which field, what to write instead).

function load(auth: string): ReturnType<typeof loadTarget> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-auth-"));
  fs.mkdirSync(path.join(root, "config", "targets"), { recursive: true });
  fs.mkdirSync(path.join(root, "app"));
  const profile = `name: shop
source:
  path: ../../app
environment:
  mode: external
  base_url: http://127.0.0.1:3000
${auth}
users:
  - name: alice
    role: member
    username: alice
    password: secret_ref:SHOP_ALICE_PASSWORD
`;
  fs.writeFileSync(path.join(root, "config", "targets", "shop.yaml"), profile);
  return loadTarget("shop", { configDir: path.join(root, "config") });
}

function problemsOf(auth: string): string {
  try {
    load(auth);
    return "";
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
}

describe("profile auth", () => {
  it("accepts a form login with only a page, a sign-up with placeholders, and harmless sign-outs", () => {
    const loaded = load(`auth:
  login: { kind: form, page: /login }
  signup:
    endpoint: POST /register
    kind: form
    body: { user: "{username}", mail: "{email}", password: "{password}" }
    allowed: true
  allow_sign_out: ["POST /api/tokens/refresh-logout"]`);
    expect(loaded.profile.auth?.login.token_from).toBeUndefined();
    expect(loaded.profile.auth?.signup).toMatchObject({ role: "user", max_users: 3, allowed: true });
    expect(loaded.profile.auth?.allow_sign_out).toEqual(["POST /api/tokens/refresh-logout"]);
    expect(load("auth:\n  login: { kind: json, endpoint: POST /api/login }").profile.auth?.login.kind).toBe(
      "json",
    );
  });

  it("names the field and the fix for a recipe that cannot work", () => {
    expect(problemsOf("auth:\n  login: { kind: form }")).toMatch(/auth\.login.*endpoint.*or page/);
    expect(problemsOf("auth:\n  login: { kind: json, endpoint: /api/login }")).toMatch(
      /auth\.login\.endpoint.*must be "METHOD \/path"/,
    );
    expect(problemsOf("auth:\n  login: { kind: json, endpoint: POST /l, token_from: data.token }")).toMatch(
      /auth\.login\.token_from.*body:<json\.path>/,
    );
    expect(
      problemsOf(`auth:
  login: { kind: bearer }
  signup: { endpoint: POST /register, kind: json, body: { user: "{username}" }, allowed: true }`),
    ).toMatch(/auth\.signup.*json or form login[\s\S]*auth\.signup\.body.*\{password\}/);
    expect(
      problemsOf("auth:\n  login: { kind: json, endpoint: POST /l }\n  allow_sign_out: [/logout]"),
    ).toMatch(/allow_sign_out/);
  });
});

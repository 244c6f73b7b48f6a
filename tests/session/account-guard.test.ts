import { describe, expect, it } from "vitest";
import type { Operation } from "../../src/map/system-map.ts";
import { accountGuard } from "../../src/probes/http/account-guard.ts";
import type { TargetProfile } from "../../src/targets/profile-schema.ts";

const profile = {
  users: [
    { name: "paula", role: "member", username: "paula@mail.test", password: "secret_ref:GUARD_TEST_PAULA" },
  ],
} as unknown as TargetProfile;
process.env.GUARD_TEST_PAULA = "Current-Pass-1";
const guard = accountGuard(profile)!;
const base = "http://app.test";

describe("account guard", () => {
  it("refuses a profile user's own-account write that changes their email or password", () => {
    expect(guard("POST", `${base}/my/profile`, "email=qaas-1%40example.test&phone=1", "paula")).toMatch(
      /would change email of profile user "paula"/,
    );
    expect(guard("PATCH", `${base}/api/me`, JSON.stringify({ user: { username: "x" } }), "paula")).toMatch(
      /would change user\.username/,
    );
    expect(guard("POST", `${base}/account/settings`, "new_password=qaas", "paula")).toMatch(
      /password of profile user/,
    );
  });

  it("lets through writes that keep the identity, other paths, sign-in steps and users the run made", () => {
    expect(
      guard("POST", `${base}/my/profile`, "email=paula%40mail.test&phone=%3Cscript%3E", "paula"),
    ).toBeUndefined();
    expect(
      guard("POST", `${base}/account/settings`, "password=Current-Pass-1&theme=dark", "paula"),
    ).toBeUndefined();
    expect(guard("POST", `${base}/admin/staff`, "email=new%40clinic.test", "paula")).toBeUndefined();
    expect(
      guard("POST", `${base}/api/users/17`, JSON.stringify({ email: "x@y.z" }), "paula"),
    ).toBeUndefined();
    expect(guard("POST", `${base}/account/register`, "email=x%40y.z&password=p", "paula")).toBeUndefined();
    expect(guard("POST", `${base}/account/password-reset`, "email=x%40y.z", "paula")).toBeUndefined();
    expect(guard("POST", `${base}/my/profile`, "email=x%40y.z", "run-account-1")).toBeUndefined();
    expect(guard("GET", `${base}/my/profile?email=x`, undefined, "paula")).toBeUndefined();
  });

  it("refuses a password change by its fields wherever it is sent, a GET query included", () => {
    // A change form read from the query, under a path that says nothing of accounts (PHP training apps).
    expect(
      guard(
        "GET",
        `${base}/modules/csrf/index.php?password_new=&password_conf=&Change=Change`,
        undefined,
        "paula",
      ),
    ).toMatch(/field password_new would change the password of profile user "paula"/);
    expect(
      guard(
        "POST",
        `${base}/api/v2/prefs`,
        JSON.stringify({ currentPassword: "x", newPassword: "qaas" }),
        "paula",
      ),
    ).toMatch(/field currentPassword/);
    expect(guard("PUT", `${base}/team/7`, "confirm_password=qaas", "paula")).toMatch(/confirm_password/);
    // The user's own password where a change form wants it, another user's session, a sign-up step.
    expect(
      guard(
        "GET",
        `${base}/modules/csrf/?password_new=Current-Pass-1&password_conf=Current-Pass-1`,
        undefined,
        "paula",
      ),
    ).toBeUndefined();
    expect(guard("GET", `${base}/modules/csrf/?password_new=x`, undefined, "run-account-1")).toBeUndefined();
    expect(guard("POST", `${base}/register.php`, "password=x&password_confirm=x", "paula")).toBeUndefined();
    expect(guard("GET", `${base}/search?q=password&page=2`, undefined, "paula")).toBeUndefined();
  });

  it("reads an operation that takes a password-change field only bare: any input may change the password", () => {
    const operation = (path: string, names: string[]): Operation => ({
      method: "GET",
      path,
      security: "unknown",
      parameters: names.map((name) => ({ name, in: "query", required: false, schema: { type: "string" } })),
      responses: {},
      seen_in: ["form"],
      documented: false,
    });
    const mapped = accountGuard(profile, [
      operation("/modules/csrf/", ["password_new", "password_conf", "Change"]),
      operation("/teams/{id}/members", ["email"]),
    ])!;
    // The handler changes the password when `Change` alone is set (to an empty one).
    expect(mapped("GET", `${base}/modules/csrf/?Change=Change`, undefined, "paula")).toMatch(
      /changes passwords there \(it takes password_new\)/,
    );
    expect(mapped("GET", `${base}/modules/csrf?Change=1`, undefined, "paula")).toMatch(/changes passwords/);
    expect(mapped("GET", `${base}/modules/csrf/`, undefined, "paula")).toBeUndefined();
    expect(mapped("GET", `${base}/modules/csrf/?Change=1`, undefined, "run-account-1")).toBeUndefined();
    expect(mapped("GET", `${base}/teams/4/members?email=x`, undefined, "paula")).toBeUndefined();
  });

  it("leaves an email field alone beside a plain username, whose current email the profile does not know", () => {
    const plain = accountGuard({
      users: [{ name: "al", role: "member", username: "alice" }],
    } as unknown as TargetProfile)!;
    expect(plain("POST", `${base}/my/profile`, "email=alice%40corpus.test&bio=x", "al")).toBeUndefined();
    expect(plain("POST", `${base}/my/profile`, "username=qaas-1&bio=x", "al")).toMatch(
      /would change username/,
    );
  });

  it("guards nothing when the profile has no users", () => {
    expect(accountGuard({ users: [] } as unknown as TargetProfile)).toBeUndefined();
  });
});

import { describe, expect, it } from "vitest";
import { grantsAdmin, privilegedFields } from "../../src/probes/api/mass-assignment-fields.ts";
import { undocumented } from "../fixtures/probe-harness.ts";

const update = {
  ...undocumented("PATCH", "/me", ["openapi", "source"]),
  request_body: {
    content_type: "application/json",
    required: true,
    schema: {
      type: "object",
      properties: {
        email: { title: "Email", type: "string" },
        role: { title: "Role", type: "string", enum: ["buyer", "seller"] },
        is_verified: { title: "Is Verified", type: "boolean" },
      },
    },
  },
};

describe("privileged fields an account may try on itself", () => {
  it("leaves documented fields out of an ordinary write, and marks them on the account's own", () => {
    const account = { role: "buyer", is_verified: false };
    expect(privilegedFields(update, account).map((field) => field.name)).toEqual(["is_admin"]);
    const own = privilegedFields(update, account, { ownAccount: true });
    expect(own.filter((field) => field.documented).map((field) => field.name)).toEqual([
      "role",
      "is_verified",
    ]);
  });

  it("counts only an administrator's rank or flag as raising an account", () => {
    expect(grantsAdmin({ name: "role", kind: "role" }, "seller")).toBe(false);
    expect(grantsAdmin({ name: "role", kind: "role" }, "admin")).toBe(true);
    expect(grantsAdmin({ name: "roles", kind: "role" }, ["superuser"])).toBe(true);
    expect(grantsAdmin({ name: "is_verified", kind: "flag" }, true)).toBe(false);
    expect(grantsAdmin({ name: "is_staff", kind: "flag" }, true)).toBe(true);
  });
});

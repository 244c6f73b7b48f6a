import { describe, expect, it } from "vitest";
import { classify } from "../../src/probes/auth/credential-operations.ts";
import { undocumented } from "../fixtures/probe-harness.ts";

// Credential-taking operations are told by the fields they ask for, whatever object a form nests them in:
// Rails' and PHP's form helpers name them `user[password]`.

const post = (path: string) => undocumented("POST", path, ["form"]);

describe("credential operations", () => {
  it("reads a registration and a sign-in whose fields are nested in an object", () => {
    const registration = classify(post("/registration"), [
      { name: "authenticity_token" },
      { name: "user[email]", type: "email" },
      { name: "user[name]" },
      { name: "user[password]" },
    ]);
    expect(registration).toMatchObject({
      role: "registration",
      identityField: "user[email]",
      identityIsEmail: true,
      passwordField: "user[password]",
      fields: ["user[email]", "user[name]", "user[password]"],
    });
    const signIn = classify(post("/session"), [{ name: "session[login]" }, { name: "session[password]" }]);
    expect(signIn).toMatchObject({
      role: "sign-in",
      identityField: "session[login]",
      passwordField: "session[password]",
    });
  });

  it("still reads plain field names, and leaves a form without a password alone", () => {
    expect(classify(post("/signup"), [{ name: "username" }, { name: "password" }])).toMatchObject({
      role: "registration",
      passwordField: "password",
    });
    expect(classify(post("/registration"), [{ name: "user[name]" }, { name: "user[city]" }])).toBeUndefined();
  });
});

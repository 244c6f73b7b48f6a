import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkCredentialStorage, storedAs } from "../../src/probes/data/credential-storage.ts";
import { TargetProfileSchema } from "../../src/targets/profile-schema.ts";
import { fakeRunContext } from "../support/fake-run-context.ts";

// How passwords are stored, read from a real SQLite file: proven by the profile users' known passwords,
// never by the look of a value alone, and never recorded in the evidence.

const PASSWORDS = {
  QAAS_CRED_TEST_ALICE: "correct-horse-1",
  QAAS_CRED_TEST_BOB: "battery-staple-2",
  QAAS_CRED_TEST_CAROL: "tr0ub4dor-3",
};

beforeEach(() => Object.assign(process.env, PASSWORDS));
afterEach(() => {
  for (const name of Object.keys(PASSWORDS)) delete process.env[name];
});

function target(build: (db: Database.Database) => void) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-credentials-"));
  const db = new Database(path.join(root, "app.db"));
  build(db);
  db.close();
  const profile = TargetProfileSchema.parse({
    name: "credentials",
    source: { path: "." },
    environment: { mode: "external", base_url: "http://127.0.0.1:9" },
    database: { kind: "sqlite", path: "app.db" },
    users: [
      {
        name: "alice",
        role: "user",
        username: "alice@example.test",
        password: "secret_ref:QAAS_CRED_TEST_ALICE",
      },
      { name: "bob", role: "user", username: "bob", password: "secret_ref:QAAS_CRED_TEST_BOB" },
      { name: "carol", role: "admin", username: "carol", password: "secret_ref:QAAS_CRED_TEST_CAROL" },
    ],
  });
  return fakeRunContext({
    target: { profile, file: path.join(root, "p.yaml"), root, goldenLedger: undefined },
  });
}

const md5 = (text: string) => createHash("md5").update(text).digest("hex");

describe("check_credential_storage", () => {
  it("finds passwords kept in plain text or as an unsalted digest, one finding per column, without the passwords", async () => {
    const run = target((db) => {
      db.exec("CREATE TABLE members (id INTEGER PRIMARY KEY, email TEXT, username TEXT, passwd TEXT)");
      db.prepare("INSERT INTO members (email, username, passwd) VALUES (?, ?, ?)").run(
        "alice@example.test",
        "alice",
        PASSWORDS.QAAS_CRED_TEST_ALICE,
      );
      db.prepare("INSERT INTO members (email, username, passwd) VALUES (?, ?, ?)").run(
        "bob@example.test",
        "bob",
        md5(PASSWORDS.QAAS_CRED_TEST_BOB),
      );
      db.exec("CREATE TABLE staff (login TEXT, password_hash TEXT)");
      db.prepare("INSERT INTO staff VALUES (?, ?)").run(
        "carol",
        md5(PASSWORDS.QAAS_CRED_TEST_CAROL).toUpperCase(),
      );
    });
    const answer = await checkCredentialStorage(run);
    if (typeof answer === "string") throw new Error(answer);
    const byPlace = Object.fromEntries(answer.candidates.map((draft) => [draft.location.value, draft]));
    expect(Object.keys(byPlace).sort()).toEqual(["members.passwd", "staff.password_hash"]);
    expect(byPlace["members.passwd"]).toMatchObject({
      domain: "security",
      defect_class: "sensitive-data-exposure",
      severity: "high",
      title: expect.stringMatching(/in plain text, as unsalted MD5 in members\.passwd/),
    });
    expect(byPlace["staff.password_hash"]).toMatchObject({ severity: "medium" });
    for (const password of Object.values(PASSWORDS)) expect(JSON.stringify(answer)).not.toContain(password);
    for (const file of fs.readdirSync(run.artifactsDir, { recursive: true, withFileTypes: true })) {
      if (!file.isFile()) continue;
      const text = fs.readFileSync(path.join(file.parentPath, file.name), "utf8");
      for (const password of Object.values(PASSWORDS)) expect(text).not.toContain(password);
    }
  });

  it("passes salted hashes and values that are not the users' passwords", async () => {
    const run = target((db) => {
      db.exec("CREATE TABLE users (id INTEGER PRIMARY KEY, username TEXT, password TEXT)");
      const insert = db.prepare("INSERT INTO users (username, password) VALUES (?, ?)");
      insert.run("alice@example.test", "$2b$12$C6UzMDM.H6dfI/f/IKcEeO5Rj8Q1Jx1r8yqY2b1iXWkqmFjv2m1G6");
      insert.run("bob", "scrypt$16384$GH7yrcdp2kPrGJWyojxebA$qCbIhd7UjXD5iV4rQBtII61fkG0mE57QGXWQlG4ULQM");
      // Short and plain-looking, but not carol's password: the look of a value proves nothing.
      insert.run("carol", "changeme");
    });
    const answer = await checkCredentialStorage(run);
    if (typeof answer === "string") throw new Error(answer);
    expect(answer.candidates).toEqual([]);
    expect(answer.stats.tables_read).toEqual(["users"]);
  });

  it("tells each stored form apart", () => {
    expect(storedAs("pw-1", "pw-1")).toBe("plaintext");
    expect(storedAs(Buffer.from("pw-1").toString("base64"), "pw-1")).toBe("base64");
    expect(storedAs(createHash("sha256").update("pw-1").digest("hex"), "pw-1")).toBe("sha256");
    expect(
      storedAs(
        createHash("sha256")
          .update("salt" + "pw-1")
          .digest("hex"),
        "pw-1",
      ),
    ).toBeUndefined();
    expect(storedAs("", "")).toBeUndefined();
  });
});

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CodeAccessScan } from "../../src/probes/code-access/data-access-types.ts";
import { scanCodeAccess } from "../../src/probes/code-access/scan-code-access.ts";

// Code access across the drivers, query builders and ORMs the DBA reads: which statement or lookup is
// consumed as one row, by which columns, and which models map to which tables. Parsing only.

const FILES: Record<string, string> = {
  "src/sql.ts": `
import Database from "better-sqlite3";
const db = new Database("app.db");
const BY_SKU = "SELECT * FROM products WHERE sku = ?";
export const bySku = (sku: string) => db.prepare(BY_SKU).get(sku);
export const byEmail = (email: string) => db.prepare(\`SELECT id FROM users WHERE email = \${email}\`).get();
const statements = { byToken: db.prepare("SELECT * FROM sessions WHERE token = ?") };
export const session = (token: string) => statements.byToken.get(token);
export const comments = (id: number) => db.prepare("SELECT * FROM comments WHERE post_id = ?").all(id);
export async function withPg(pool: any, slug: string) {
  const result = await pool.query("SELECT * FROM tags WHERE name = $1", [slug]);
  const [first] = await pool.query("SELECT * FROM posts WHERE slug = $1 LIMIT 1", [slug]);
  await sql\`SELECT * FROM invites WHERE code = \${slug}\`;
  return [result.rows[0], first];
}
export const spend = () => db.prepare("UPDATE wallets SET balance = balance - ? WHERE id = ?").run(1, 2);
export const label = "Update your profile";
`,
  "src/orm.ts": `
export const accounts = sqliteTable("accounts", { handle: text("handle_name").notNull() });
@Entity("members") export class Member {}
export async function lookups(prisma: any, knex: any, repo: any, db: any, order: any) {
  await prisma.user.findUnique({ where: { email: "a" } });
  await prisma.user.findFirst({ where: { AND: [{ a: 1 }] } });
  await knex("teams").where({ slug: "s" }).first();
  await knex("teams").where("code", "=", "c").first();
  await repo.findOneBy({ username: "u" });
  await Member.findOne({ where: { nickname: "n" } });
  await db.select().from(accounts).where(eq(accounts.handle, "h")).get();
  const [row] = await db.select().from(accounts).where(and(eq(accounts.handle, "h"), eq(accounts.id, 1)));
  if (order.status === "paid" || order["status"] !== "void") return row;
  switch (order.state) { case "open": case "closed": break; }
  return ["low", "high"].includes(order.priority);
}
`,
  "app/models.py": `
from django.db import models
class Coupon(models.Model):
    code = models.CharField(max_length=20)
    owner = models.ForeignKey("User", on_delete=models.CASCADE)
class Account(Base):
    __tablename__ = "accounts"
    handle = Column("handle_name", String)
`,
  "app/queries.py": `
FIND = "SELECT * FROM users WHERE email = ?"
def find(conn, session, email):
    cur = conn.cursor()
    cur.execute(FIND, (email,))
    row = cur.fetchone()
    conn.execute("SELECT * FROM items WHERE sku = ?", (email,)).fetchone()
    many = conn.execute(f"SELECT * FROM items WHERE owner_id = {email}").fetchall()
    Coupon.objects.get(code="x")
    Coupon.objects.get(pk=1)
    session.query(Account).filter_by(handle="h").first()
    session.execute(select(Account).where(Account.handle == "z")).scalar_one()
    User.query.filter_by(username="q").one()
    conn.execute("UPDATE accounts SET balance = balance - ? WHERE id = ?", (1, 2))
    if row["status"] == "paid" or row.state in ("open", "closed"):
        return many
`,
  "tests/ignored.test.ts": `db.prepare("SELECT * FROM secrets WHERE id = ?").get(1);`,
  "defects.yaml": "SELECT * FROM answers WHERE key = 'x'",
};

let root: string;
let scan: CodeAccessScan;
beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-code-access-"));
  for (const [name, text] of Object.entries(FILES)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), text);
  }
  scan = await scanCodeAccess(root);
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const summary = (file: string) =>
  scan.accesses
    .filter((access) => access.file === file)
    .map(
      (access) =>
        `${access.cardinality} ${access.via} ${access.sql ?? `${access.model}(${access.columns?.join(",")})`}`,
    );

describe("scanCodeAccess", () => {
  it("reads SQL strings in JS/TS and how each result is consumed", () => {
    expect(summary("src/sql.ts")).toEqual([
      "single .get() SELECT * FROM products WHERE sku = ?",
      "single .get() SELECT id FROM users WHERE email = ?",
      "single .get() SELECT * FROM sessions WHERE token = ?",
      "many .all() SELECT * FROM comments WHERE post_id = ?",
      "single .rows[0] SELECT * FROM tags WHERE name = $1",
      "single const [row] = SELECT * FROM posts WHERE slug = $1 LIMIT 1",
      "unknown unknown SELECT * FROM invites WHERE code = ?",
      "write .run() UPDATE wallets SET balance = balance - ? WHERE id = ?",
    ]);
  });

  it("reads single-row lookups of prisma, knex, typeorm/sequelize and drizzle, and model declarations", () => {
    expect(summary("src/orm.ts")).toEqual([
      "single findUnique user(email)",
      "single .first() teams(slug)",
      "single .first() teams(code)",
      "single findOneBy repo(username)",
      "single findOne Member(nickname)",
      "single .get() accounts(handle)",
      "single const [row] = accounts(handle,id)",
    ]);
    expect(scan.modelTables).toMatchObject({
      accounts: "accounts",
      Member: "members",
      Coupon: "app_coupon",
      Account: "accounts",
    });
    expect(scan.modelColumns).toMatchObject({
      "accounts.handle": "handle_name",
      "Account.handle": "handle_name",
      "Coupon.owner": "owner_id",
    });
  });

  it("reads Python sqlite3 calls, Django and SQLAlchemy lookups through one python3 process", () => {
    expect(summary("app/queries.py")).toEqual([
      "single .fetchone() SELECT * FROM users WHERE email = ?",
      "single .fetchone() SELECT * FROM items WHERE sku = ?",
      "many .fetchall() SELECT * FROM items WHERE owner_id = ?",
      "single .objects.get() Coupon(code)",
      "single .first() Account(handle)",
      "single .scalar_one() Account(handle)",
      "single .one() User(username)",
      "write statement UPDATE accounts SET balance = balance - ? WHERE id = ?",
    ]);
    expect(scan.problems).toEqual([]);
  });

  it("collects the fixed strings properties are compared with", () => {
    const byProperty = new Map<string, Set<string>>();
    for (const comparison of scan.comparisons) {
      const values = byProperty.get(comparison.property) ?? new Set<string>();
      for (const value of comparison.values) values.add(value);
      byProperty.set(comparison.property, values);
    }
    expect([...(byProperty.get("status") ?? [])].sort()).toEqual(["paid", "void"]);
    expect([...(byProperty.get("state") ?? [])].sort()).toEqual(["closed", "open"]);
    expect([...(byProperty.get("priority") ?? [])].sort()).toEqual(["high", "low"]);
  });

  it("never reads tests or the answer key", () => {
    expect(scan.accesses.some((access) => /secrets|answers/.test(access.sql ?? ""))).toBe(false);
    expect(scan.accesses.some((access) => access.file.startsWith("tests/"))).toBe(false);
  });
});

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { StatementLog, statementLogOf } from "../../src/probes/load/statement-log.ts";
import { TargetProfileSchema } from "../../src/targets/profile-schema.ts";
import { fakeRunContext } from "../support/fake-run-context.ts";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) fs.rmSync(folder, { recursive: true, force: true });
});

function logIn(): StatementLog {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-statement-log-"));
  folders.push(folder);
  return new StatementLog(path.join(folder, "statements.log"), "statements.log");
}

describe("StatementLog", () => {
  it("answers only the statements appended during an action, grouped by shape, control statements apart", async () => {
    const log = logIn();
    fs.writeFileSync(log.file, "SELECT 1 FROM before_the_window\n");
    const { result, window } = await log.around(async () => {
      fs.appendFileSync(
        log.file,
        "BEGIN \nSELECT * FROM t WHERE id = 1\nSELECT * FROM t WHERE id = 2\nCOMMIT\n",
      );
      return "done";
    });
    expect(result).toBe("done");
    expect(window.statements).toHaveLength(4);
    expect(window.queries).toEqual(["SELECT * FROM t WHERE id = 1", "SELECT * FROM t WHERE id = 2"]);
    expect(Object.fromEntries(window.shapes)).toEqual({ "SELECT * FROM t WHERE id = ?": 2 });
  });

  it("reads an application's ordinary log: statements after a log prefix, other lines left out", async () => {
    const log = logIn();
    const { window } = await log.around(async () => {
      fs.appendFileSync(
        log.file,
        [
          "2026-12-07 10:00:01,120 INFO aiohttp.access: 127.0.0.1 GET /api/boats 200",
          "SQL: SELECT * FROM boats WHERE club_id = 1",
          "2026-12-07 10:00:01,121 INFO sqlalchemy.engine.Engine SELECT * FROM boats WHERE club_id = 2",
          "[db] UPDATE boats SET name = 'x' WHERE id = 3",
          "Server ready; listening",
          "",
        ].join("\n"),
      );
    });
    expect(window.queries).toEqual([
      "SELECT * FROM boats WHERE club_id = 1",
      "SELECT * FROM boats WHERE club_id = 2",
      "UPDATE boats SET name = 'x' WHERE id = 3",
    ]);
    expect(Object.fromEntries(window.shapes)).toMatchObject({ "SELECT * FROM boats WHERE club_id = ?": 2 });
  });

  it("waits for statements an application writes after it has answered", async () => {
    const log = logIn();
    const { window } = await log.around(async () => {
      setTimeout(() => fs.appendFileSync(log.file, "SELECT late FROM t\n"), 5);
    });
    expect(window.queries).toEqual(["SELECT late FROM t"]);
  });

  it("learns a short settle for an app that logs before it answers, and keeps the long one after a late line", async () => {
    const log = logIn();
    const readOnce = (late: boolean) =>
      log.around(async () => {
        fs.appendFileSync(log.file, "SELECT now FROM t\n");
        if (late) setTimeout(() => fs.appendFileSync(log.file, "SELECT late FROM t\n"), 5);
      });
    for (let reading = 0; reading < 9; reading += 1) await readOnce(false);
    expect(log.settleSpellMs).toBe(80);
    await readOnce(false);
    expect(log.settleSpellMs).toBe(20);
    const { window } = await readOnce(true);
    expect(window.queries).toEqual(["SELECT now FROM t", "SELECT late FROM t"]);
    for (let reading = 0; reading < 12; reading += 1) await readOnce(false);
    expect(log.settleSpellMs).toBe(80);
  });

  it("reads a log truncated since the mark from its start, and a missing log as empty", () => {
    const log = logIn();
    expect(log.mark()).toBe(0);
    expect(log.since(0).statements).toEqual([]);
    fs.writeFileSync(log.file, "SELECT a FROM t\nSELECT b FROM t\n");
    const mark = log.mark();
    fs.writeFileSync(log.file, "SELECT c FROM t\n");
    expect(log.since(mark).queries).toEqual(["SELECT c FROM t"]);
  });

  it("is found from the profile, or says what to add", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-statement-profile-"));
    folders.push(root);
    const profile = TargetProfileSchema.parse({
      name: "t",
      source: { path: "." },
      environment: { mode: "managed", base_url: "http://127.0.0.1:1" },
      database: {
        kind: "sqlite",
        path: "app.db",
        statement_log: { env: { SQL_LOG: "log/sql.log" }, file: "log/sql.log" },
      },
    });
    const context = fakeRunContext({
      target: { profile, file: path.join(root, "t.yaml"), root, goldenLedger: undefined },
    });
    const found = statementLogOf(context);
    expect(typeof found !== "string" && found.file).toBe(path.join(root, "log/sql.log"));
    // One per agent of a run: what one tool's readings taught it serves the agent's next tool.
    expect(statementLogOf(context)).toBe(found);
    delete profile.database!.statement_log;
    const missing = statementLogOf(
      fakeRunContext({ target: { profile, file: path.join(root, "t.yaml"), root, goldenLedger: undefined } }),
    );
    expect(missing).toMatch(/no database\.statement_log/);
  });
});

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/config-errors.ts";
import { QaasError } from "../../src/errors.ts";
import { listTargets, loadTarget } from "../../src/targets/load-target.ts";
import {
  loadSecretsFile,
  resolveSecret,
  resolveUserSecret,
  secretsFileOf,
} from "../../src/targets/secrets.ts";

// Each test writes its own configuration folder with a targets/ folder and a source folder beside it.
function workspace(profiles: Record<string, string>): { configDir: string; root: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-target-"));
  const configDir = path.join(root, "config");
  fs.mkdirSync(path.join(configDir, "targets"), { recursive: true });
  fs.mkdirSync(path.join(root, "app"));
  for (const [name, text] of Object.entries(profiles)) {
    fs.writeFileSync(path.join(configDir, "targets", `${name}.yaml`), text);
  }
  return { configDir, root };
}

const SHOP = `name: shop
source:
  path: ../../app
environment:
  mode: external
  base_url: http://127.0.0.1:3000
users:
  - name: alice
    role: member
    username: alice@example.test
    password: secret_ref:SHOP_ALICE_PASSWORD
golden_ledger: spec/defects.yaml
`;

function caught(run: () => unknown): QaasError {
  try {
    run();
  } catch (error) {
    if (error instanceof QaasError) return error;
    throw error;
  }
  throw new Error("expected a QaasError");
}

describe("loadTarget", () => {
  it("loads a profile by name and resolves the source root and golden ledger", () => {
    const { configDir, root } = workspace({ shop: SHOP });
    const target = loadTarget("shop", { configDir });
    expect(target.file).toBe(path.join(configDir, "targets", "shop.yaml"));
    expect(target.root).toBe(path.join(root, "app"));
    expect(target.goldenLedger).toBe(path.join(root, "app", "spec", "defects.yaml"));
    expect(target.profile.users[0]?.password).toBe("secret_ref:SHOP_ALICE_PASSWORD");
  });

  it("loads a profile by path", () => {
    const { configDir, root } = workspace({ shop: SHOP });
    const file = path.join(configDir, "targets", "shop.yaml");
    expect(loadTarget(file).root).toBe(path.join(root, "app"));
  });

  it("lists the available profiles when a name is unknown", () => {
    const { configDir } = workspace({ shop: SHOP, blog: SHOP.replace("name: shop", "name: blog") });
    expect(listTargets(configDir)).toEqual(["blog", "shop"]);
    const error = caught(() => loadTarget("shopp", { configDir }));
    expect(error.code).toBe("TARGET_NOT_FOUND");
    expect(error.message).toContain("available: blog, shop");
  });

  it("refuses a literal password, naming the field and line without echoing the value", () => {
    const { configDir } = workspace({
      shop: SHOP.replace("secret_ref:SHOP_ALICE_PASSWORD", "hunter2-very-secret"),
    });
    const error = caught(() => loadTarget("shop", { configDir })) as ConfigError;
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.code).toBe("TARGET_INVALID");
    expect(error.problems).toEqual([
      expect.objectContaining({
        path: "users[0].password",
        line: 11,
        message: expect.stringContaining("literal credential"),
      }),
    ]);
    expect(error.message).toContain("shop.yaml:11 users[0].password:");
    expect(error.message).not.toContain("hunter2");
  });

  it("finds credentials the schema cannot see: command environments and URLs with a password", () => {
    const profile = `${SHOP.replace(
      "  base_url: http://127.0.0.1:3000\n",
      "  base_url: http://127.0.0.1:3000\n  start:\n    command: npm start\n    env:\n      SESSION_SECRET: abc123\n",
    )}database:\n  kind: postgres\n  statement_log:\n    env: { LOG_TO: "postgres://admin:pw@db/app" }\n    file: q.log\n`;
    const { configDir } = workspace({ shop: profile });
    const error = caught(() => loadTarget("shop", { configDir })) as ConfigError;
    expect(error.problems.map((problem) => problem.path)).toEqual([
      "environment.start.env.SESSION_SECRET",
      "database.statement_log.env.LOG_TO",
    ]);
    expect(error.message).not.toContain("abc123");
  });

  it("allows login placeholders and recipe keys that only look like credentials", () => {
    const profile = `${SHOP}auth:\n  login:\n    kind: json\n    endpoint: POST /login\n    body: { email: "{username}", password: "{password}" }\n    token_from: body:token\n`;
    const { configDir } = workspace({ shop: profile });
    expect(loadTarget("shop", { configDir }).profile.auth?.login.token_from).toBe("body:token");
  });

  it("reports a missing source folder and a live mode without a base URL at their lines", () => {
    const { configDir } = workspace({
      shop: SHOP.replace("path: ../../app", "path: ../../nowhere").replace(
        "  base_url: http://127.0.0.1:3000\n",
        "",
      ),
    });
    const error = caught(() => loadTarget("shop", { configDir })) as ConfigError;
    expect(error.problems.map((problem) => [problem.path, problem.line])).toEqual([
      ["source.path", 3],
      ["environment.base_url", 4],
    ]);
  });

  it("reports unknown keys with the valid ones", () => {
    const { configDir } = workspace({
      shop: SHOP.replace("  mode: external", "  mode: external\n  base_ulr: x"),
    });
    const error = caught(() => loadTarget("shop", { configDir })) as ConfigError;
    expect(error.problems[0]).toMatchObject({ path: "environment.base_ulr", line: 6 });
    expect(error.problems[0]?.message).toContain('did you mean "base_url"?');
  });
});

describe("secrets", () => {
  it("resolves a reference when it is used, from the environment given", () => {
    const { configDir } = workspace({ shop: SHOP });
    const target = loadTarget("shop", { configDir });
    const env: Record<string, string> = {};
    const error = caught(() => resolveUserSecret(target, "alice", "password", env));
    expect(error.code).toBe("SECRET_MISSING");
    expect(error.message).toContain("SHOP_ALICE_PASSWORD");
    expect(error.message).toContain('user "alice" password');
    env.SHOP_ALICE_PASSWORD = "set-later";
    expect(resolveUserSecret(target, "alice", "password", env)).toBe("set-later");
    expect(resolveSecret("secret_ref:SHOP_ALICE_PASSWORD", env)).toBe("set-later");
    expect(caught(() => resolveSecret("hunter2", env)).code).toBe("SECRET_REF_INVALID");
  });

  it("loads a secrets file without overriding the environment", () => {
    const { root } = workspace({});
    const file = path.join(root, "app", ".env.qaas");
    fs.writeFileSync(
      file,
      [
        "# demo credentials",
        "",
        "export PLAIN=one two # trailing comment",
        'DOUBLE="a \\"quoted\\" value # kept"',
        "SINGLE='no $expansion \\n'",
        "KEPT=from-file",
      ].join("\n"),
    );
    const env: Record<string, string | undefined> = { KEPT: "from-env" };
    expect(loadSecretsFile(file, env)).toEqual({ loaded: ["PLAIN", "DOUBLE", "SINGLE"], kept: ["KEPT"] });
    expect(env).toEqual({
      KEPT: "from-env",
      PLAIN: "one two",
      DOUBLE: 'a "quoted" value # kept',
      SINGLE: "no $expansion \\n",
    });
  });

  it("names file and line of a malformed secrets line without echoing it", () => {
    const { root } = workspace({});
    const file = path.join(root, "secrets.env");
    fs.writeFileSync(file, "GOOD=1\nnot a line with s3cr3t\n");
    const error = caught(() => loadSecretsFile(file, {}));
    expect(error.code).toBe("SECRETS_FILE_INVALID");
    expect(error.message).toMatch(/secrets\.env:2: expected NAME=value/);
    expect(error.message).not.toContain("s3cr3t");
    fs.writeFileSync(file, 'OPEN="never closed\n');
    expect(caught(() => loadSecretsFile(file, {})).message).toMatch(/secrets\.env:1: .*never closes/);
  });

  it("resolves the profile's secrets file against the profile's folder, like source.path", () => {
    const { configDir } = workspace({
      shop: SHOP.replace("  mode: external", "  mode: external\n  secrets_file: .env.qaas"),
    });
    expect(secretsFileOf(loadTarget("shop", { configDir }))).toBe(
      path.join(configDir, "targets", ".env.qaas"),
    );
  });
});

import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { runDoctor } from "../../src/cli/commands/doctor.ts";
import { runInit } from "../../src/cli/commands/init.ts";
import { QaasError } from "../../src/errors.ts";
import { initTarget } from "../../src/init/init-target.ts";
import { loadTarget } from "../../src/targets/load-target.ts";
import { type AppTree, expressShop, fastapiTodo, flaskNotes } from "../fixtures/init-apps/apps.ts";
import { captureStdout } from "../fixtures/init-apps/capture-stdout.ts";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const DEMO = path.join(REPO, "target-app");
const run = promisify(execFile);

function writeApp(tree: AppTree): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-init-app-"));
  for (const [relative, content] of Object.entries(tree)) {
    fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true });
    fs.writeFileSync(path.join(root, relative), content);
  }
  return root;
}

function profileFolder(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "qaas-init-profiles-"));
}

async function qaas(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [path.join(REPO, "bin", "qaas.js"), ...args], {
      cwd: REPO,
      env: { ...process.env, NO_COLOR: "1", ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

describe("qaas init: what it guesses", () => {
  it("reads an Express app: package name, env port default, Swagger 2.0 in docs/, a sign-in form, the session cookie", async () => {
    const root = writeApp(expressShop);
    const out = path.join(profileFolder(), "targets", "shop-api.yaml");
    const { guess, file } = await initTarget({ dir: root, out });
    expect(file).toBe(out);
    const loaded = loadTarget(out);
    expect(loaded.root).toBe(root);
    expect(loaded.profile).toMatchObject({
      name: "shop-api",
      description: "A small shop",
      environment: {
        mode: "managed",
        base_url: "http://127.0.0.1:4321",
        health_path: "/healthz",
        start: { command: "npm start", env: { SHOP_PORT: "4321" } },
      },
      api: { openapi: "docs/api/swagger.yaml" },
      ui: { entry: "/" },
      websocket: { paths: ["/socket.io/"] },
      database: { kind: "sqlite", path: "var/shop.sqlite" },
      tests: { command: "npm test" },
      auth: {
        login: {
          kind: "form",
          endpoint: "POST /session",
          body: { email: "{username}", passphrase: "{password}" },
          token_from: "cookie:shop.sid",
          apply_as: "cookie:shop.sid",
        },
      },
      users: [
        { name: "user_a", username: "", password: "secret_ref:SHOP_API_USER_A_PASSWORD" },
        { name: "user_b", username: "", password: "secret_ref:SHOP_API_USER_B_PASSWORD" },
      ],
    });
    expect(guess.operations).toEqual({ total: 7, documented: 2, fromSource: 7 });
    // The header says what was guessed and from where, and the file parses to the same profile.
    const text = fs.readFileSync(out, "utf8");
    expect(text).toMatch(/^# Written by `qaas init` from /);
    expect(text).toMatch(/# +port +4321 +← server\.js:\d+ \(default of SHOP_PORT\)/);
    expect(text).toMatch(
      /# +auth\.login +form POST \/session +← .*a form posts to it \(views\/login\.ejs:2\)/,
    );
    expect(text).toMatch(/# +database +sqlite var\/shop\.sqlite +← server\.js:8/);
    expect(parseYaml(text)).toEqual(guess.profile);
  });

  it("reads a Flask app: a __main__ block, a port variable, a sqlite:/// URL, a template that posts back", async () => {
    const root = writeApp(flaskNotes);
    const out = path.join(profileFolder(), "notes.yaml");
    await initTarget({ dir: root, out });
    expect(loadTarget(out).profile).toMatchObject({
      name: "notes",
      environment: {
        mode: "managed",
        base_url: "http://127.0.0.1:5050",
        health_path: "/status",
        start: { command: "python3 app.py", env: { NOTES_PORT: "5050" } },
      },
      ui: { entry: "/" },
      database: { kind: "sqlite", path: "instance/notes.db" },
      tests: { command: "python3 -m pytest" },
      auth: {
        login: {
          kind: "form",
          endpoint: "POST /login",
          body: { username: "{username}", password: "{password}" },
          token_from: "cookie:session",
        },
      },
    });
    expect(loadTarget(out).profile.api).toBeUndefined();
  });

  it("reads a FastAPI app: uvicorn module:app, its served document, PostgreSQL by variable, an OAuth2 token form", async () => {
    const root = writeApp(fastapiTodo);
    const out = path.join(profileFolder(), "targets", "todo.yaml");
    const { guess } = await initTarget({ dir: root, out, name: "todo" });
    expect(loadTarget(out).profile).toMatchObject({
      name: "todo",
      environment: {
        mode: "managed",
        base_url: "http://127.0.0.1:8000",
        health_path: "/health",
        start: { command: "python3 -m uvicorn app.main:api --host 127.0.0.1 --port 8000" },
      },
      api: { openapi: "/openapi.json" },
      websocket: { paths: ["/ws/updates"] },
      database: { kind: "postgres", url: "secret_ref:TODO_DATABASE_URL" },
      auth: {
        login: {
          kind: "form",
          endpoint: "POST /auth/token",
          body: { username: "{username}", password: "{password}" },
          token_from: "body:access_token",
        },
      },
    });
    expect(loadTarget(out).profile.ui).toBeUndefined();
    expect(guess.missing).toContain("no HTML pages found: BROWSER and GUIDE need ui.entry");
    expect(guess.secrets).toEqual(["TODO_USER_A_PASSWORD", "TODO_USER_B_PASSWORD", "TODO_DATABASE_URL"]);
  });

  it("names the project from pyproject.toml, and falls back to external with token users when it finds no start or sign-in", async () => {
    const root = writeApp({
      "pyproject.toml": '[project]\nname = "Billing_Service"\ndependencies = ["flask"]\n',
      "billing/routes.py":
        "from flask import Blueprint\nbp = Blueprint('b', __name__)\n\n@bp.get('/invoices')\ndef invoices():\n    return []\n",
    });
    const folder = profileFolder();
    const { guess, file } = await initTarget({ dir: root, configDir: folder });
    expect(file).toBe(path.join(folder, "targets", "billing_service.yaml"));
    const profile = loadTarget(file).profile;
    expect(profile.environment).toMatchObject({
      mode: "external",
      base_url: "http://127.0.0.1:5000",
      health_path: "/",
    });
    expect(profile.environment.start).toBeUndefined();
    expect(profile.auth).toBeUndefined();
    expect(profile.users.map((user) => user.token)).toEqual([
      "secret_ref:BILLING_SERVICE_USER_A_TOKEN",
      "secret_ref:BILLING_SERVICE_USER_B_TOKEN",
    ]);
    expect(guess.guessed.find((entry) => entry.what === "name")).toEqual({
      what: "name",
      value: "billing_service",
      from: "pyproject.toml name",
    });
  });

  it("refuses to overwrite a profile without --force, and a folder that is not there", async () => {
    const root = writeApp(flaskNotes);
    const out = path.join(profileFolder(), "notes.yaml");
    fs.writeFileSync(out, "# mine\n");
    await expect(initTarget({ dir: root, out })).rejects.toThrow(/already exists; pass --force/);
    expect(fs.readFileSync(out, "utf8")).toBe("# mine\n");
    await initTarget({ dir: root, out, force: true });
    expect(loadTarget(out).profile.name).toBe("notes");
    expect(fs.readdirSync(path.dirname(out))).toEqual(["notes.yaml"]);
    const missing = initTarget({ dir: path.join(root, "nope"), out });
    await expect(missing).rejects.toBeInstanceOf(QaasError);
    await expect(missing).rejects.toThrow(/is not a folder/);
  });
});

// The whole loop as a person runs it: `qaas init`, fill in the users, `qaas doctor`.
describe("qaas init then qaas doctor", () => {
  interface DoctorOutput {
    agents: Array<{ agent: string; canRun: boolean; reasons: string[]; works_from?: string }>;
    missing_secrets: unknown[];
    users_without_username: unknown[];
  }

  /** What a person fills in: each username in the file, each variable in a secrets file the profile names. */
  function fillIn(file: string): Record<string, string> {
    const text = fs
      .readFileSync(file, "utf8")
      .replace('username: ""', "username: first@example.test")
      .replace('username: ""', "username: second@example.test")
      .replace(/^environment:\n/m, "environment:\n  secrets_file: filled.env\n");
    fs.writeFileSync(file, text);
    const secrets = Object.fromEntries(
      [...text.matchAll(/secret_ref:([A-Z0-9_]+)/g)].map((match) => [match[1]!, "filled-in"]),
    );
    fs.writeFileSync(
      path.join(path.dirname(file), "filled.env"),
      Object.keys(secrets)
        .map((name) => `${name}=filled-in\n`)
        .join(""),
    );
    return secrets;
  }

  function accepted(stdout: string): DoctorOutput {
    const output = JSON.parse(stdout) as DoctorOutput;
    expect(output.missing_secrets).toEqual([]);
    expect(output.users_without_username).toEqual([]);
    return output;
  }

  const canRun = (output: DoctorOutput) =>
    output.agents
      .filter((row) => row.canRun)
      .map((row) => row.agent)
      .sort();
  const worksFrom = (output: DoctorOutput, agent: string) =>
    output.agents.find((row) => row.agent === agent)?.works_from;

  /** The commands' own implementations in this process, one case at a time. */
  async function initFillDoctor(tree: AppTree, name: string): Promise<DoctorOutput> {
    const out = path.join(profileFolder(), `${name}.yaml`);
    const init = await captureStdout(() => runInit(writeApp(tree), { out }));
    expect(init.code).toBe(0);
    expect(init.stdout).toContain(`wrote ${out} (target ${name})`);
    expect(init.stdout).toContain(`qaas doctor --target ${out}`);
    fillIn(out);
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-init-home-"));
    const doctor = await captureStdout(() => runDoctor({ target: out, home, json: true }));
    expect(doctor.code).toBe(0);
    return accepted(doctor.stdout);
  }

  // The real binaries once, on the bundled demo: slow on a loaded machine.
  it("on the bundled demo's tree: what the shipped profile says, and every agent can run", {
    timeout: 240_000,
  }, async () => {
    const out = path.join(profileFolder(), "demo-guess.yaml");
    const init = await qaas(["init", DEMO, "--out", out]);
    expect(init.code, init.stderr).toBe(0);
    const again = await qaas(["init", DEMO, "--out", out]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("[INIT_EXISTS]");
    const guessed = loadTarget(out).profile;
    const shipped = loadTarget("demo").profile;
    expect(guessed.environment).toMatchObject({
      mode: shipped.environment.mode,
      base_url: shipped.environment.base_url,
      health_path: shipped.environment.health_path,
    });
    expect(guessed.api?.openapi).toBe(shipped.api?.openapi);
    expect(guessed.ui).toEqual(shipped.ui);
    expect(guessed.database).toEqual({ kind: shipped.database?.kind, path: shipped.database?.path });
    expect(shipped.websocket?.paths).toEqual(expect.arrayContaining(guessed.websocket?.paths ?? ["(none)"]));
    const login = shipped.auth?.login;
    expect(guessed.auth?.login).toMatchObject({
      kind: login?.kind,
      endpoint: login?.endpoint,
      body: login?.body,
      token_from: login?.token_from,
    });

    const secrets = fillIn(out);
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-init-home-"));
    const doctor = await qaas(["doctor", "--target", out, "--home", home, "--json"], secrets);
    expect(doctor.code, doctor.stderr).toBe(0);
    const output = accepted(doctor.stdout);
    expect(canRun(output)).toHaveLength(15);
    expect(worksFrom(output, "API")).toMatch(
      /^\d+ operations — \d+ documented, \d+ from source; document \S+ \(profile\)$/,
    );
    expect(worksFrom(output, "DBA")).toBe(`${shipped.database?.kind} ${shipped.database?.path} (profile)`);
  });

  it("on the Express app", async () => {
    const output = await initFillDoctor(expressShop, "shop");
    expect(canRun(output)).toEqual(
      [
        "API",
        "ARCHITECT",
        "AUDITOR",
        "BROWSER",
        "DBA",
        "GUIDE",
        "LOAD",
        "MAPPER",
        "REPORTER",
        "SOCKET",
        "TRIAGE",
      ].sort(),
    );
    expect(worksFrom(output, "API")).toBe(
      "7 operations — 2 documented, 7 from source; document docs/api/swagger.yaml (profile)",
    );
  });

  it("on the Flask app", async () => {
    const output = await initFillDoctor(flaskNotes, "notes");
    expect(canRun(output)).toEqual(
      [
        "API",
        "ARCHITECT",
        "AUDITOR",
        "BROWSER",
        "DBA",
        "GUIDE",
        "LOAD",
        "MAPPER",
        "REPORTER",
        "TRIAGE",
      ].sort(),
    );
    expect(worksFrom(output, "API")).toBe("5 operations — 0 documented, 5 from source");
  });

  it("on the FastAPI app", async () => {
    const output = await initFillDoctor(fastapiTodo, "todo");
    expect(canRun(output)).toEqual(
      ["API", "ARCHITECT", "AUDITOR", "DBA", "LOAD", "MAPPER", "REPORTER", "SOCKET", "TRIAGE"].sort(),
    );
    expect(worksFrom(output, "DBA")).toBe("postgres from TODO_DATABASE_URL (profile)");
    expect(worksFrom(output, "SOCKET")).toBe("1 channel (websocket /ws/updates from profile and source)");
  });
});

import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { type RunningApp, startApp } from "../src/app.ts";

export const APP_ROOT = fileURLToPath(new URL("..", import.meta.url));
const SECRETS_FILE = path.resolve(APP_ROOT, "../config/targets/demo.secrets.env");

export const EMAILS = {
  alice: "alice@acme.test",
  carol: "carol@acme.test",
  adam: "adam@acme.test",
  bob: "bob@globex.test",
  gina: "gina@globex.test",
  root: "root@tasklane.test",
} as const;

export type UserName = keyof typeof EMAILS;

function loadPasswords(): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of readFileSync(SECRETS_FILE, "utf8").split("\n")) {
    const match = line.match(/^([A-Z0-9_]+)=(.*)$/);
    if (match) values[match[1]!] = match[2]!.trim();
  }
  return values;
}

const PASSWORDS = loadPasswords();

export function passwordOf(name: UserName): string {
  const value = PASSWORDS[`DEMO_${name.toUpperCase()}_PASSWORD`];
  if (!value) throw new Error(`no password for ${name} in ${SECRETS_FILE}`);
  return value;
}

export interface Response {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: test responses are inspected dynamically
  json: any;
}

export interface TestApp extends RunningApp {
  dataDir: string;
  tokens: Partial<Record<UserName, string>>;
  request: (
    method: string,
    url: string,
    options?: { as?: UserName; token?: string; body?: unknown; headers?: Record<string, string> },
  ) => Promise<Response>;
  login: (name: UserName) => Promise<string>;
  sqlLines: () => string[];
  stop: () => Promise<void>;
}

/** Starts the app on a free port with its own temporary data folder. */
export async function startTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "tasklane-test-"));
  const running = await startApp({
    port: 0,
    dataDir,
    env: { SQL_LOG: "1", APP_TEST_RESET: "1", LOG_LEVEL: "silent", ...env },
  });
  const tokens: Partial<Record<UserName, string>> = {};

  const request: TestApp["request"] = async (method, url, options = {}) => {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    const token = options.token ?? (options.as ? await login(options.as) : undefined);
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      headers["content-type"] ??= "application/json";
      body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    }
    const response = await fetch(`${running.url}${url}`, { method, headers, body, redirect: "manual" });
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json };
  };

  const login = async (name: UserName): Promise<string> => {
    const cached = tokens[name];
    if (cached) return cached;
    const response = await fetch(`${running.url}/api/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: EMAILS[name], password: passwordOf(name) }),
    });
    if (response.status !== 200) throw new Error(`login ${name} failed with ${response.status}`);
    const token = ((await response.json()) as { token: string }).token;
    tokens[name] = token;
    return token;
  };

  const sqlFile = path.join(dataDir, "sql.log");
  const sqlLines = () =>
    existsSync(sqlFile) ? readFileSync(sqlFile, "utf8").split("\n").filter(Boolean) : [];

  return {
    ...running,
    dataDir,
    tokens,
    request,
    login,
    sqlLines,
    stop: async () => {
      await running.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Counts the SQL statements one request runs, from the statement log. */
export async function queriesDuring(app: TestApp, action: () => Promise<unknown>): Promise<string[]> {
  const before = app.sqlLines().length;
  await action();
  return app.sqlLines().slice(before);
}

export interface SocketProbe {
  socket: WebSocket;
  // biome-ignore lint/suspicious/noExplicitAny: messages are inspected dynamically
  messages: any[];
  opened: Promise<boolean>;
  // biome-ignore lint/suspicious/noExplicitAny: messages are inspected dynamically
  waitFor: (predicate: (message: any) => boolean, timeoutMs?: number) => Promise<any>;
  settle: (ms: number) => Promise<void>;
  close: () => void;
}

/** Opens a WebSocket and records every JSON message; `opened` resolves false when the upgrade is refused. */
export function openSocket(app: TestApp, pathAndQuery: string): SocketProbe {
  const socket = new WebSocket(`${app.url.replace("http", "ws")}${pathAndQuery}`);
  // biome-ignore lint/suspicious/noExplicitAny: messages are inspected dynamically
  const messages: any[] = [];
  const waiters = new Set<() => void>();
  socket.on("message", (data) => {
    messages.push(JSON.parse(String(data)));
    for (const wake of waiters) wake();
  });
  socket.on("error", () => {});
  const opened = new Promise<boolean>((resolve) => {
    socket.once("open", () => resolve(true));
    socket.once("unexpected-response", () => resolve(false));
    socket.once("close", () => resolve(false));
  });
  return {
    socket,
    messages,
    opened,
    waitFor: (predicate, timeoutMs = 3000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = messages.find(predicate);
          if (found === undefined) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching message within ${timeoutMs} ms; got ${JSON.stringify(messages)}`));
        }, timeoutMs);
        if (!check()) waiters.add(check);
      }),
    settle: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    close: () => socket.close(),
  };
}

export function readSource(relative: string): string {
  return readFileSync(path.join(APP_ROOT, relative), "utf8");
}

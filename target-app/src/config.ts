import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const APP_ROOT = fileURLToPath(new URL("..", import.meta.url));

export type Env = Record<string, string | undefined>;

export interface AppConfig {
  host: string;
  port: number;
  dataDir: string;
  dbFile: string;
  sqlLogFile: string | null;
  auditLogFile: string;
  avatarsDir: string;
  publicDir: string;
  tokenSecret: string;
  tokenAlgorithm: string;
  tokenTtlSeconds: number;
  loginMaxFailures: number;
  loginWindowSeconds: number;
  testReset: boolean;
  logLevel: string;
  version: string;
}

function intFrom(value: string | undefined, fallback: number): number {
  if (value === undefined || value.trim() === "") return fallback;
  const parsed = Number.parseInt(value, 10);
  return Number.isFinite(parsed) && parsed > 0 ? parsed : fallback;
}

function flag(value: string | undefined): boolean {
  return value === "1" || value === "true" || value === "yes";
}

/** The signing secret comes from TOKEN_SECRET, else from a random key kept in the data folder. */
function resolveSecret(env: Env, dataDir: string): string {
  if (env.TOKEN_SECRET && env.TOKEN_SECRET.length >= 16) return env.TOKEN_SECRET;
  const keyFile = path.join(dataDir, "secret.key");
  if (existsSync(keyFile)) return readFileSync(keyFile, "utf8").trim();
  const secret = randomBytes(32).toString("base64url");
  writeFileSync(keyFile, `${secret}\n`, { mode: 0o600 });
  return secret;
}

export function loadConfig(env: Env, overrides: { port?: number; dataDir?: string } = {}): AppConfig {
  const dataDir = path.resolve(overrides.dataDir ?? env.DATA_DIR ?? path.join(APP_ROOT, "data"));
  mkdirSync(dataDir, { recursive: true });
  const sqlLogEnabled = flag(env.SQL_LOG);
  return {
    host: "127.0.0.1",
    port: overrides.port ?? intFrom(env.PORT, 4010),
    dataDir,
    dbFile: path.join(dataDir, "tasklane.db"),
    sqlLogFile: sqlLogEnabled ? path.resolve(dataDir, env.SQL_LOG_FILE ?? "sql.log") : null,
    auditLogFile: path.join(dataDir, "audit.log"),
    avatarsDir: path.join(dataDir, "avatars"),
    publicDir: path.join(APP_ROOT, "public"),
    tokenSecret: resolveSecret(env, dataDir),
    tokenAlgorithm: env.TOKEN_ALG ?? "HS256",
    tokenTtlSeconds: intFrom(env.TOKEN_TTL_SECONDS, 3600),
    loginMaxFailures: intFrom(env.LOGIN_MAX_FAILURES, 10),
    loginWindowSeconds: intFrom(env.LOGIN_WINDOW_SECONDS, 60),
    testReset: flag(env.APP_TEST_RESET),
    logLevel: env.LOG_LEVEL ?? "warn",
    version: "1.4.2",
  };
}

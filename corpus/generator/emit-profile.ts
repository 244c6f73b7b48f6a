import type { CorpusServer } from "../model/servers.ts";
import { SQLITE_FILE, SQLITE_FILE_VARIABLE } from "../oracles/query-plan.ts";
import { STATEMENT_LOG_FILE, STATEMENT_LOG_VARIABLE } from "../oracles/statement-log.ts";
import { GENERATED_NOTICE } from "./emit-node.ts";
import { RESET_PATH, signInEndpoint } from "./server-base.ts";

// The target profile of a corpus server: managed (qaas starts it, resets it, stops it), its sign-in
// recipe, its three people, and its golden ledger outside the server's own folder so no tool that reads
// the target's files can see the answer key.

export const SECRETS_FILE = "corpus.secrets.env";

export interface ProfileOptions {
  port?: number;
  /** Absolute paths, for a profile written outside corpus/targets (the bench's temporary ones). */
  sourcePath?: string;
  ledgerPath?: string;
  secretsFile?: string;
}

export function emitProfile(server: CorpusServer, options: ProfileOptions = {}): string {
  const port = options.port ?? server.port;
  const base = `http://127.0.0.1:${port}`;
  const start = server.stack === "node" ? "node app.mjs" : "/usr/bin/python3 app.py";
  const reset = `node -e "fetch('${base}${RESET_PATH}', { method: 'POST', headers: { 'x-corpus-reset': process.env.CORPUS_RESET_TOKEN } }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"`;
  const lines = [
    `# ${GENERATED_NOTICE}`,
    "# A DELIBERATELY VULNERABLE corpus server: qaas starts it on 127.0.0.1 only (see corpus/README.md).",
    `name: ${server.name}`,
    `description: qaas conformance corpus, ${server.stack} on ${server.database}, ${authWords(server)}, ${docWords(server)}`,
    "source:",
    `  path: ${options.sourcePath ?? `../servers/${server.name}`}`,
    "environment:",
    "  mode: managed",
    `  base_url: ${base}`,
    "  health_path: /health",
    "  start:",
    `    command: ${start}`,
    "    env:",
    `      PORT: "${port}"`,
    ...(server.database === "postgres"
      ? [
          "      # A PostgreSQL server the bench (or you) started; the app makes its own schema in it.",
          "      DATABASE_URL: secret_ref:CORPUS_DATABASE_URL",
        ]
      : [
          "      # The database as a file (not in memory), so that query plans and the schema can be read.",
          `      ${SQLITE_FILE_VARIABLE}: ${SQLITE_FILE}`,
        ]),
    "  reset:",
    `    command: >-\n      ${reset}`,
    "    timeout_seconds: 20",
    `  secrets_file: ${options.secretsFile ?? SECRETS_FILE}`,
    "  startup_timeout_seconds: 20",
    "api:",
    ...(server.doc === "none" ? [] : ["  openapi: openapi.yaml"]),
    "  exclude:",
    `    - POST ${RESET_PATH}`,
    "database:",
    `  kind: ${server.database}`,
    ...(server.database === "sqlite" ? [`  path: ${SQLITE_FILE}`] : []),
    // The runtime writes every statement it sends there, so queries per request can be counted.
    "  statement_log:",
    "    env:",
    `      ${STATEMENT_LOG_VARIABLE}: ${STATEMENT_LOG_FILE}`,
    `    file: ${STATEMENT_LOG_FILE}`,
    ...authLines(server),
    "users:",
    ...user(server, "user_a", "member", "northwind", "alice"),
    ...user(server, "user_b", "member", "southpaw", "bruno"),
    ...user(server, "admin_a", "admin", "northwind", "dana"),
    `entry_points:\n  - ${server.stack === "node" ? "app.mjs" : "app.py"}`,
    `golden_ledger: ${options.ledgerPath ?? `../../ledgers/${server.name}.yaml`}`,
  ];
  return `${lines.join("\n")}\n`;
}

function authLines(server: CorpusServer): string[] {
  const endpoint = signInEndpoint(server);
  if (server.auth === "bearer") {
    return [
      "auth:",
      "  login:",
      "    kind: json",
      `    endpoint: POST ${endpoint}`,
      "    body:",
      '      email: "{username}"',
      '      password: "{password}"',
      "    token_from: body:token",
      "    apply_as: header:Authorization",
      "    scheme: Bearer",
      "    ttl_seconds: 3600",
    ];
  }
  if (server.auth === "cookie") {
    return [
      "auth:",
      "  login:",
      "    kind: form",
      `    endpoint: POST ${endpoint}`,
      "    body:",
      '      username: "{username}"',
      '      password: "{password}"',
      "    token_from: cookie:session",
      "    apply_as: cookie:session",
    ];
  }
  return ["auth:", "  login:", "    kind: api_key", "    apply_as: header:X-API-Key"];
}

function user(server: CorpusServer, name: string, role: string, tenant: string, person: string): string[] {
  const upper = person.toUpperCase();
  return [
    `  - name: ${name}`,
    `    role: ${role}`,
    `    tenant: ${tenant}`,
    `    username: ${person}@corpus.test`,
    server.auth === "apikey"
      ? `    token: secret_ref:CORPUS_${upper}_API_KEY`
      : `    password: secret_ref:CORPUS_${upper}_PASSWORD`,
  ];
}

function authWords(server: CorpusServer): string {
  return {
    bearer: "bearer JWT from a JSON sign-in",
    cookie: "session cookie from a form sign-in",
    apikey: "API-key header",
  }[server.auth];
}

function docWords(server: CorpusServer): string {
  return {
    full: "complete OpenAPI document",
    partial: "partial OpenAPI document",
    none: "no OpenAPI document",
  }[server.doc];
}

/** The people's credentials: fixed, fake, for loopback test servers only. */
export function emitSecrets(): string {
  return `# ${GENERATED_NOTICE}
# Credentials of the corpus servers' seeded people. Fake, for deliberately vulnerable loopback servers only.
CORPUS_ALICE_PASSWORD=alice-corpus-7Kq2
CORPUS_BRUNO_PASSWORD=bruno-corpus-4Xw9
CORPUS_DANA_PASSWORD=dana-corpus-8Pz5
CORPUS_ALICE_API_KEY=ak_alice_6f1d2c9e8b7a4f30
CORPUS_BRUNO_API_KEY=ak_bruno_0c3e5a7d9f1b2e48
CORPUS_DANA_API_KEY=ak_dana_9b8e7f6a5d4c3b21
CORPUS_RESET_TOKEN=reset-corpus-2f7c
`;
}

import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

// A JSON sign-in and password-reset API in two builds: `flawed` tells accounts apart, never limits failed
// sign-ins and hands the reset token back; `sound` answers every failure alike, answers 429 after five
// failures for one account name, and only says a mail was sent.

export interface CredentialApp {
  baseUrl: string;
  /** Failed sign-ins per account name, to assert the probe never guessed at a real user's password. */
  failures: Map<string, number>;
  close(): Promise<void>;
}

export const ACCOUNTS: Record<string, string> = {
  "alice@fixture.test": "alice-password",
  "bob@fixture.test": "bob-password",
};

const LIMIT = 5;

export async function startCredentialApp(build: "flawed" | "sound"): Promise<CredentialApp> {
  const failures = new Map<string, number>();
  const server = http.createServer(async (request, response) => {
    const body = await readJson(request);
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { "content-type": "application/json", ...headers });
      response.end(JSON.stringify(value));
    };
    const email = typeof body.email === "string" ? body.email : "";
    if (request.method === "POST" && request.url === "/auth/login") {
      if (build === "sound" && (failures.get(email) ?? 0) >= LIMIT) {
        return json(429, { error: "too many attempts" }, { "retry-after": "60" });
      }
      if (!email || typeof body.password !== "string" || !body.password) {
        return json(400, { error: "email and password are required" });
      }
      const known = email in ACCOUNTS;
      if (known && body.password === ACCOUNTS[email]) {
        return json(200, { token: randomBytes(24).toString("hex") });
      }
      failures.set(email, (failures.get(email) ?? 0) + 1);
      if (build === "flawed" && !known) return json(404, { error: "no such account" });
      return json(401, { error: build === "flawed" ? "wrong password" : "invalid email or password" });
    }
    // Behind a gateway that wants a key it never gets: a blanket refusal, whatever the body says.
    if (request.method === "POST" && request.url === "/auth/token") {
      return json(401, { error: "authentication required" });
    }
    if (request.method === "POST" && request.url === "/auth/password/forgot") {
      if (build === "flawed") {
        if (!(email in ACCOUNTS)) return json(404, { error: "no such account" });
        return json(200, { status: "sent", reset_token: randomBytes(20).toString("hex") });
      }
      return json(200, { status: "if the account exists, a mail was sent" });
    }
    json(404, { error: "not found" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    failures,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function readJson(request: http.IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>);
      } catch {
        resolve({});
      }
    });
  });
}

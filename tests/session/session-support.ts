import { Semaphore } from "../../src/probes/http/concurrency.ts";
import { HttpClient, RequestBudget } from "../../src/probes/http/http-client.ts";
import { SessionPool } from "../../src/probes/session/session-pool.ts";
import { profileFor } from "../fixtures/probe-harness.ts";

// Shared by the session tests that run against tests/session/browser-app.ts.

export const ALICE = {
  name: "alice",
  role: "member",
  username: "alice",
  password: "secret_ref:BROWSER_ALICE_PW",
};
export const BOB = { name: "bob", role: "member", username: "bob", password: "secret_ref:BROWSER_BOB_PW" };

export function setPasswords(): void {
  process.env.BROWSER_ALICE_PW = "alice-password";
  process.env.BROWSER_BOB_PW = "bob-password";
  process.env.BROWSER_WRONG_PW = "not-the-password";
}

export function client(options: { writesAllowed?: boolean; budget?: number } = {}): HttpClient {
  return new HttpClient({
    limiter: new Semaphore(4),
    budget: new RequestBudget(options.budget ?? 300),
    writesAllowed: options.writesAllowed ?? true,
  });
}

export function poolFor(
  baseUrl: string,
  auth: Record<string, unknown>,
  users: Array<Record<string, unknown>>,
): SessionPool {
  const profile = profileFor({
    name: "browser",
    source: {},
    environment: { mode: "managed", base_url: baseUrl },
    auth,
    users,
  });
  return new SessionPool(profile, baseUrl);
}

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { selfCheck } from "../../corpus/harness/self-check.ts";
import { SERVERS } from "../../corpus/model/servers.ts";
import { type PostgresServer, startPostgres } from "../support/postgres-server.ts";

// The corpus's honesty: every variant's oracle, asked of the running server, agrees with its label. A
// vulnerable SQL variant must show the boolean differential (and break the way its error style says), its
// parameterised twin must not; the shell marker must run only in the vulnerable sink; and so on for every
// family. Each server starts on a port the OS picks; the PostgreSQL ones share a throwaway cluster.

let postgres: PostgresServer;

beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);

afterAll(async () => {
  await postgres?.stop();
});

describe("corpus self-check", () => {
  for (const server of SERVERS) {
    it(`labels every variant of ${server.name} truthfully`, { timeout: 400_000 }, async () => {
      const results = await selfCheck({ servers: [server], databaseUrl: postgres.url });
      expect(results.length).toBeGreaterThan(40);
      const disagreements = results
        .filter((result) => !result.agrees)
        .map((result) => `${result.id} (${result.label}): ${result.evidence}`);
      expect(disagreements).toEqual([]);
      expect(results.some((result) => result.label === "vulnerable" && result.flawed)).toBe(true);
      expect(results.some((result) => result.label === "safe" && !result.flawed)).toBe(true);
    });
  }
});

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { isHealthy, prepareEnvironment } from "../../src/targets/environment.ts";
import { freePort } from "../../src/targets/free-port.ts";
import { profileFor } from "../fixtures/probe-harness.ts";

// A managed target that died comes back with restart(): started again with its own command, healthy.

const SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "http", "crashing-server.mjs");

/** The profile of a managed server on a free port, and a home of its own. */
async function managedServer() {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-env-"));
  const profile = profileFor({
    name: "crashing",
    source: {},
    environment: {
      mode: "managed",
      base_url: baseUrl,
      health_path: "/health",
      start: { command: `"${process.execPath}" "${SERVER}"`, env: { PORT: String(port) } },
      startup_timeout_seconds: 10,
    },
  });
  return {
    baseUrl,
    home,
    target: { profile, file: path.join(home, "profile.yaml"), root: home, goldenLedger: undefined },
  };
}

describe("managed environment restart", () => {
  it("stops the server a killed process of the run left running elsewhere, given its pid, and starts its own", async () => {
    const { target, baseUrl } = await managedServer();
    const leftBehind = await prepareEnvironment(target, {
      home: fs.mkdtempSync(path.join(os.tmpdir(), "qaas-env-")),
      log: () => {},
    });
    const takingOver = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-env-"));
    try {
      // Another home knows nothing of that server: its address is taken.
      await expect(prepareEnvironment(target, { home: takingOver, log: () => {} })).rejects.toThrow(
        /something already answers/,
      );
      const logged: string[] = [];
      const environment = await prepareEnvironment(target, {
        home: takingOver,
        leftoverPid: leftBehind.pid!,
        log: (message) => logged.push(message),
      });
      try {
        expect(environment.pid).not.toBe(leftBehind.pid);
        expect(await isHealthy(`${baseUrl}/health`)).toBe(true);
        expect(logged.join("\n")).toContain(`left running by an earlier run (pid ${leftBehind.pid})`);
        expect(() => process.kill(-leftBehind.pid!, 0)).toThrow();
      } finally {
        await environment.stop();
      }
    } finally {
      await leftBehind.stop();
    }
  }, 30_000);

  it("starts a server that died again, on the same address", async () => {
    const { target, baseUrl, home } = await managedServer();
    const environment = await prepareEnvironment(target, { home, log: () => {} });
    try {
      const firstPid = environment.pid;
      await fetch(`${baseUrl}/next?to=%0D%0A`).catch(() => undefined);
      for (let waited = 0; waited < 3000 && (await isHealthy(`${baseUrl}/health`)); waited += 100)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await isHealthy(`${baseUrl}/health`)).toBe(false);
      await environment.restart?.();
      expect(await isHealthy(`${baseUrl}/health`)).toBe(true);
      expect(environment.pid).not.toBe(firstPid);
    } finally {
      await environment.stop();
    }
    expect(await isHealthy(`${baseUrl}/health`)).toBe(false);
  }, 30_000);

  it("names a port the Fetch standard blocks when a server listening there never looks healthy", async () => {
    const { target } = await managedServer();
    const environment = target.profile.environment;
    const blocked = {
      ...target,
      profile: {
        ...target.profile,
        environment: {
          ...environment,
          base_url: "http://127.0.0.1:6665",
          start: { command: "sleep 30" },
          startup_timeout_seconds: 1,
        },
      },
    };
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-env-"));
    await expect(prepareEnvironment(blocked, { home, log: () => {} })).rejects.toThrow(
      /port 6665 is one the Fetch standard blocks/,
    );
  });
});

import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { TargetDownError, WriteNotAllowedError } from "../../src/probes/http/http-client.ts";
import type { TargetLiveness } from "../../src/probes/http/liveness.ts";
import { openHttpClient, probeTargetOf, TARGET_RESTART_KEY } from "../../src/probes/http/run-http.ts";
import { sessionPoolFor } from "../../src/probes/session/session-pool.ts";
import { profileFor } from "../fixtures/probe-harness.ts";
import { type FakeRunContext, fakeRunContext } from "../support/fake-run-context.ts";

// A fixture server (its own process, port 0) that exits on one request: the run must notice, name that
// request, and either restart the target and go on (managed) or stop sending to it (external).

const SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), "crashing-server.mjs");
const running: ChildProcess[] = [];

async function startServer(port = 0): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(process.execPath, [SERVER], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "ignore"],
  });
  running.push(child);
  const listening = await new Promise<number>((resolve, reject) => {
    child.stdout?.once("data", (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
    child.once("exit", (code) => reject(new Error(`fixture server exited with ${code}`)));
  });
  return { port: listening, child };
}

afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

function contextFor(
  mode: "managed" | "external",
  port: number,
  signIn: Record<string, unknown> = {},
): FakeRunContext {
  const profile = profileFor({
    ...signIn,
    name: "crashing",
    source: {},
    environment: {
      mode,
      base_url: `http://127.0.0.1:${port}`,
      health_path: "/health",
      allow_writes: true,
      ...(mode === "managed" ? { start: { command: "unused: the test restarts the fixture itself" } } : {}),
    },
  });
  return fakeRunContext({
    target: { profile, file: "/tmp/crashing.yaml", root: undefined, goldenLedger: undefined },
  });
}

function clientOf(context: FakeRunContext) {
  const target = probeTargetOf(context);
  if (typeof target === "string") throw new Error(target);
  return { client: openHttpClient(context, target), baseUrl: target.baseUrl };
}

/** A managed target on a fixture server the test restarts itself, counting each restart. */
async function restartableTarget(signIn: Record<string, unknown> = {}) {
  const first = await startServer();
  const restarts = { count: 0 };
  const context = contextFor("managed", first.port, signIn);
  context.shared.set(TARGET_RESTART_KEY, async () => {
    restarts.count += 1;
    await startServer(first.port);
  });
  return { context, restarts, ...clientOf(context) };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const CRASH = "/next?to=%2Fhome%0D%0AX-Injected%3A%201";

describe("a target that dies in the middle of a run", () => {
  it("managed: restarts the target, confirms the culprit by replaying it alone, files a finding and goes on", async () => {
    const { context, client, baseUrl, restarts } = await restartableTarget();

    expect((await client.send({ method: "GET", url: `${baseUrl}/a` })).response?.status).toBe(200);
    const harmless = await client.send({ method: "GET", url: `${baseUrl}/next?to=%2Fhome` });
    expect(harmless.response?.status).toBe(302);
    const [crash, inFlight] = await Promise.all([
      client.send({ method: "GET", url: `${baseUrl}${CRASH}` }),
      client.send({ method: "GET", url: `${baseUrl}/slow` }),
    ]);
    // The culprit is not sent again by a retry; the request cut off with it is, on the restarted target.
    expect(crash.response).toBeUndefined();
    expect(inFlight.response?.status).toBe(200);
    // Restarted once to recover, once more after the replay took it down again.
    expect(restarts.count).toBe(2);
    const after = await client.send({ method: "GET", url: `${baseUrl}/b` });
    expect(after.response?.body).toBe("hello /b");
    // Another CR/LF to the operation that crashed is not sent (it would only cost a restart); plain input is.
    await expect(client.send({ method: "GET", url: `${baseUrl}/next?to=%2Fa%0Ab` })).rejects.toBeInstanceOf(
      WriteNotAllowedError,
    );
    // Nor another character a header refuses, which kills a server that copies input into one just as well.
    await expect(client.send({ method: "GET", url: `${baseUrl}/next?to=%2Fcaf%C3%A9` })).rejects.toThrow(
      /non-ASCII characters/,
    );
    expect((await client.send({ method: "GET", url: `${baseUrl}/next?to=%2Fa` })).response?.status).toBe(302);
    // Another input of that operation is still probed with such values: it never reached the header.
    const otherInput = await client.send({
      method: "GET",
      url: `${baseUrl}/next?to=%2Fa&note=x%0D%0Ay%C3%A9`,
    });
    expect(otherInput.response?.status).toBe(302);
    expect(restarts.count).toBe(2);

    const envelopes = context.readEnvelopes();
    expect(envelopes).toHaveLength(1);
    const finding = envelopes[0]!;
    expect(finding).toMatchObject({
      domain: "api",
      defect_class: "unhandled-error",
      severity: "high",
      location: { kind: "endpoint", value: "GET /next" },
    });
    expect(finding.title).toContain("crashes on GET /next");
    expect(finding.confidence).toBeGreaterThanOrEqual(0.9);
    expect(finding.reproduction.curl).toContain("%0D%0A");
    expect(finding.evidence.map((item) => item.description).join("\n")).toContain(
      "replay-on-restarted-target",
    );
    const notes = context.entries.filter((entry) => entry.kind === "target_down");
    expect(notes).toHaveLength(1);
    expect(notes[0]?.data).toMatchObject({ confirmed: true, recovered: true, mode: "managed" });
  }, 20_000);

  it("managed: signs every user in again after a restart, before the next request is answered as nobody", async () => {
    process.env.CRASHING_ALICE_PW = "alice-password";
    const { context, client, baseUrl } = await restartableTarget({
      auth: {
        login: {
          kind: "json",
          endpoint: "POST /login",
          body: { username: "{username}", password: "{password}" },
          token_from: "body:token",
          apply_as: "header:Authorization",
        },
      },
      users: [{ name: "alice", role: "member", username: "alice", password: "secret_ref:CRASHING_ALICE_PW" }],
    });
    const pool = sessionPoolFor(context, baseUrl);
    const me = { method: "GET", url: `${baseUrl}/me` };

    expect((await pool.send(client, "alice", me)).response?.body).toBe("alice");
    await client.send({ method: "GET", url: `${baseUrl}${CRASH}` });
    expect(client.targetRestarts).toBeGreaterThan(0);

    const after = await pool.send(client, "alice", me);
    expect(after.response?.body).toBe("alice");
    // The old token was never sent to the restarted target: no request was answered as nobody.
    expect(client.stats.by_status["401"] ?? 0).toBe(0);
    expect(pool.summaries()[0]).toMatchObject({ user: "alice", sign_ins: 2 });
  }, 20_000);

  it("managed: a second crash on an operation already confirmed is not replayed, so it costs one restart", async () => {
    const { context, client, baseUrl, restarts } = await restartableTarget();
    await client.send({ method: "GET", url: `${baseUrl}/a` });
    await client.send({ method: "GET", url: `${baseUrl}/explode?x=boom-1` });
    // Recovered, then taken down by the replay that confirmed it, and recovered again.
    expect(restarts.count).toBe(2);
    const second = await client.send({ method: "GET", url: `${baseUrl}/explode?x=boom-2` });
    expect(second.response).toBeUndefined();
    expect(restarts.count).toBe(3);
    expect((await client.send({ method: "GET", url: `${baseUrl}/b` })).response?.body).toBe("hello /b");

    expect(context.readEnvelopes()).toHaveLength(1);
    const notes = context.entries.filter((entry) => entry.kind === "target_down").map((entry) => entry.data);
    expect(notes).toHaveLength(2);
    expect(notes[1]).toMatchObject({ after: "GET /explode?x=boom-2", confirmed: false, recovered: true });
    expect(String(notes[1]?.message)).toContain("not replayed");
  }, 20_000);

  it("managed: a request cut off by two crashes another request caused is still answered", async () => {
    const { client, baseUrl, restarts } = await restartableTarget();
    await client.send({ method: "GET", url: `${baseUrl}/a` });
    const innocent = client.send({ method: "GET", url: `${baseUrl}/slow` });
    await sleep(50);
    // Cuts /slow off; the replay confirms it as the cause, and /slow is sent again once the target is back.
    await client.send({ method: "GET", url: `${baseUrl}/explode?x=boom-1` });
    await sleep(50);
    // Cuts the resent /slow off too: a known cause, so /slow is innocent and goes out a third time.
    await client.send({ method: "GET", url: `${baseUrl}/explode?x=boom-2` });
    expect(restarts.count).toBe(3);
    const answered = await innocent;
    expect(answered.response?.body).toBe("slow");
  }, 20_000);

  it("managed: never restarts more than its cap; past it the run stops sending", async () => {
    const { client, baseUrl, restarts } = await restartableTarget();
    await client.send({ method: "GET", url: `${baseUrl}/a` });
    // Each crash costs two restarts (recover, then after the confirming replay): the cap of 6 is met at the third.
    for (let round = 0; round < 4; round += 1) {
      const crash = `/next/${round}?to=%2Fhome%0D%0AX-Injected%3A%201`;
      await client.send({ method: "GET", url: `${baseUrl}${crash}` }).catch(() => undefined);
    }
    expect(restarts.count).toBe(6);
    await expect(client.send({ method: "GET", url: `${baseUrl}/a` })).rejects.toBeInstanceOf(TargetDownError);
  }, 30_000);

  it("external: stops sending to a dead target, names the last request before it died, claims no confirmation", async () => {
    const { port } = await startServer();
    const context = contextFor("external", port);
    const { client, baseUrl } = clientOf(context);
    await client.send({ method: "GET", url: `${baseUrl}/a` });
    // A slow, harmless request is in flight first: the one carrying CR/LF is still named before it.
    const slow = client.send({ method: "GET", url: `${baseUrl}/slow` });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const crash = await client.send({ method: "GET", url: `${baseUrl}${CRASH}` });
    expect(crash.response).toBeUndefined();
    expect((await slow).response).toBeUndefined();

    const started = Date.now();
    await expect(client.send({ method: "GET", url: `${baseUrl}/b` })).rejects.toBeInstanceOf(TargetDownError);
    // A second probe's client: refused at once, counted as a skipped probe.
    const other = clientOf(context).client;
    await expect(other.send({ method: "GET", url: `${baseUrl}/c` })).rejects.toThrow(/stopped answering/);
    expect(Date.now() - started).toBeLessThan(500);
    const liveness = context.shared.get(`http:liveness:${new URL(baseUrl).origin}`) as TargetLiveness;
    expect(liveness.skippedCalls).toBe(2);
    expect(liveness.skippedRequests).toBe(2);

    const note = context.entries.find((entry) => entry.kind === "target_down");
    expect(note?.data).toMatchObject({ mode: "external", confirmed: false, recovered: false });
    expect(String(note?.data.message)).toMatch(/after GET \/next.*stops sending/);
    const [finding] = context.readEnvelopes();
    expect(finding?.title).toContain("stopped answering right after GET /next");
    expect(finding?.confidence).toBeLessThan(0.9);
    expect(
      finding?.evidence.some((item) => /not replayed.*GET \/next.*GET \/slow/.test(item.description)),
    ).toBe(true);
    expect(finding?.severity).toBe("medium");
  }, 20_000);

  it("a lone dropped connection on a target that still answers is no death", async () => {
    const { port } = await startServer();
    const context = contextFor("external", port);
    const { client, baseUrl } = clientOf(context);
    await client.send({ method: "GET", url: `${baseUrl}/a` });
    const dropped = await client.send({ method: "GET", url: `${baseUrl}/drop` });
    expect(dropped.connection).toBe("reset");
    expect((await client.send({ method: "GET", url: `${baseUrl}/b` })).response?.status).toBe(200);
    expect(context.entries.some((entry) => entry.kind === "target_down")).toBe(false);
    expect(context.readEnvelopes()).toHaveLength(0);
  }, 20_000);

  it("a target that never answered is not declared dead (nothing to compare with)", async () => {
    const { port, child } = await startServer();
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    const context = contextFor("external", port);
    const { client, baseUrl } = clientOf(context);
    const refused = await client.send({ method: "GET", url: `${baseUrl}/a` });
    expect(refused.connection).toBe("refused");
    expect((await client.send({ method: "GET", url: `${baseUrl}/b` })).connection).toBe("refused");
    expect(context.entries.some((entry) => entry.kind === "target_down")).toBe(false);
  }, 20_000);
});

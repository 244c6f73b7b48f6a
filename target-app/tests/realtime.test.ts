import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSocket, type SocketProbe, startTestApp, type TestApp } from "./helpers.ts";

let app: TestApp;
const sockets: SocketProbe[] = [];

function socket(pathAndQuery: string): SocketProbe {
  const probe = openSocket(app, pathAndQuery);
  sockets.push(probe);
  return probe;
}

beforeAll(async () => {
  app = await startTestApp();
  for (const name of ["alice", "bob", "adam"] as const) await app.login(name);
});

afterAll(async () => {
  for (const probe of sockets) probe.close();
  await app?.stop();
});

describe("seeded realtime defects", () => {
  it("DEMO-27 /ws/presence streams who is online, across tenants, without any token", async () => {
    const anonymous = socket("/ws/presence");
    expect(await anonymous.opened).toBe(true);
    const snapshot = await anonymous.waitFor((message) => message.type === "presence.snapshot");
    expect(snapshot.seq).toBe(1);
    const garbage = socket("/ws/presence?token=not-a-token");
    expect(await garbage.opened).toBe(true);

    const alice = socket(`/ws?token=${app.tokens.alice}`);
    const bob = socket(`/ws?token=${app.tokens.bob}`);
    await Promise.all([alice.opened, bob.opened]);
    const joinedAlice = await anonymous.waitFor(
      (m) => m.type === "presence.join" && m.user.name === "Alice Archer",
    );
    const joinedBob = await anonymous.waitFor(
      (m) => m.type === "presence.join" && m.user.name === "Bob Becker",
    );
    expect(joinedAlice.user.tenant_id).not.toBe(joinedBob.user.tenant_id);
    await garbage.waitFor((m) => m.type === "presence.join");

    const scoped = socket(`/ws/presence?token=${app.tokens.adam}`);
    const scopedSnapshot = await scoped.waitFor((message) => message.type === "presence.snapshot");
    expect(scopedSnapshot.users.every((user: { tenant_id: number }) => user.tenant_id === 1)).toBe(true);
    alice.close();
    bob.close();
  });

  it("DEMO-28 /ws delivers a tenant's comment events to sockets of other tenants", async () => {
    const bob = socket(`/ws?token=${app.tokens.bob}`);
    await bob.waitFor((message) => message.type === "hello");
    await app.request("PATCH", "/api/tasks/2", { as: "alice", body: { status: "in_progress" } });
    const comment = await app.request("POST", "/api/tasks/2/comments", {
      as: "alice",
      body: { body: "Internal note for Acme only" },
    });
    expect(comment.status).toBe(201);
    const leaked = await bob.waitFor((message) => message.type === "comment.created");
    expect(leaked.data.comment.body).toBe("Internal note for Acme only");
    expect(leaked.data.task.key).toMatch(/^WEB-/);
    await bob.settle(200);
    expect(bob.messages.some((message) => message.type === "task.updated")).toBe(false);
    bob.close();
  });

  it("DEMO-29 /ws hands out duplicate or out-of-order seq numbers under a burst of changes", async () => {
    let problem: string | null = null;
    for (let round = 0; round < 5 && problem === null; round++) {
      const alice = socket(`/ws?token=${app.tokens.alice}`);
      await alice.waitFor((message) => message.type === "hello");
      const burst = Array.from({ length: 10 }, (_, i) =>
        app.request("PATCH", `/api/tasks/${10 + i}`, { as: "alice", body: { title: `Burst ${round}-${i}` } }),
      );
      await Promise.all(burst);
      await alice.waitFor(
        (message) => message.type === "task.updated" && message.data.task.title === `Burst ${round}-9`,
      );
      await alice.settle(100);
      const seqs = alice.messages
        .filter((message) => message.type === "task.updated")
        .map((m) => m.seq as number);
      if (new Set(seqs).size !== seqs.length) problem = `duplicates in ${seqs.join(",")}`;
      else if (seqs.some((seq, i) => i > 0 && seq <= seqs[i - 1]!))
        problem = `out of order: ${seqs.join(",")}`;
      alice.close();
    }
    expect(problem).not.toBeNull();
  });

  it("DEMO-30 /ws advertises resume with ?since= but does not replay missed events", async () => {
    const first = socket(`/ws?token=${app.tokens.alice}`);
    const hello = await first.waitFor((message) => message.type === "hello");
    expect(hello.resume).toEqual({ param: "since", buffer: 200 });
    first.close();
    for (const id of [30, 31, 32]) {
      await app.request("PATCH", `/api/tasks/${id}`, { as: "alice", body: { status: "done" } });
    }
    await first.settle(150);
    const resumed = socket(`/ws?token=${app.tokens.alice}&since=${hello.seq}`);
    const again = await resumed.waitFor((message) => message.type === "hello");
    expect(again.seq).toBeGreaterThan(hello.seq);
    await resumed.settle(300);
    expect(resumed.messages.filter((message) => message.type !== "hello")).toEqual([]);

    const legacy = socket(`/ws?token=${app.tokens.alice}&last_event_id=${hello.seq}`);
    await legacy.waitFor((message) => message.type === "task.updated");
    resumed.close();
    legacy.close();
  });
});

describe("correct behaviour that looks suspicious", () => {
  it("DEMO-N9 /ws refuses connections without a valid token", async () => {
    for (const query of ["", "?token=", "?token=garbage", `?token=${app.tokens.alice}x`]) {
      const probe = socket(`/ws${query}`);
      expect(await probe.opened, query).toBe(false);
    }
    const signedIn = socket(`/ws?token=${app.tokens.alice}`);
    expect(await signedIn.opened).toBe(true);
    const hello = await signedIn.waitFor((message) => message.type === "hello");
    expect(hello.user.name).toBe("Alice Archer");
    signedIn.close();
  });
});

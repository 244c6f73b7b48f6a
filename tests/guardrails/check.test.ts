import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { GuardedAction } from "../../src/guardrails/actions.ts";
import { check, checkAction, noteAllowed } from "../../src/guardrails/check.ts";
import { ok } from "../../src/tools/result.ts";
import { defineTool } from "../../src/tools/tool.ts";
import type { Row } from "./fixture.ts";
import {
  contextFor,
  createFixture,
  expectRow,
  FIXER,
  loadedTarget,
  REPRODUCER,
  TRIAGE,
  write,
} from "./fixture.ts";

// check() itself (the allowlist, several actions per call, faults, counting with noteAllowed) and the
// rules that are not about files or branches: the ticket cap, shell commands and requests to the target.

const fixture = createFixture();
afterAll(() => fixture.cleanup());
const target = loadedTarget(fixture);

const ROWS: Row[] = [
  // ticket-cap
  {
    name: "triage files a ticket",
    agent: TRIAGE,
    action: { kind: "ticket_create" },
    expected: "allowed",
    guard: { ticketsFiled: 1 },
  },
  {
    name: "triage files past the cap",
    agent: TRIAGE,
    action: { kind: "ticket_create" },
    expected: "ticket-cap",
    guard: { ticketsFiled: 2 },
  },
  {
    name: "fixer may not file tickets",
    agent: FIXER,
    action: { kind: "ticket_create" },
    expected: "ticket-cap",
  },
  // forbidden-command
  {
    name: "running the tests",
    agent: FIXER,
    action: { kind: "shell", command: "npm test -- --run" },
    expected: "allowed",
  },
  {
    name: "echoing the word merge",
    agent: FIXER,
    action: { kind: "shell", command: 'echo "merge"' },
    expected: "allowed",
  },
  {
    name: "git merge behind -C",
    agent: FIXER,
    action: { kind: "shell", command: "git -C repo merge x" },
    expected: "forbidden-command",
  },
  {
    name: "a configured forbidden command",
    agent: FIXER,
    action: { kind: "shell", command: "npm   publish --access public" },
    expected: "forbidden-command",
  },
  {
    name: "reading the answer key from the shell",
    agent: FIXER,
    action: { kind: "shell", command: "cat < defects.yaml" },
    expected: "golden-ledger",
  },
  {
    name: "reading the golden ledger from the shell",
    agent: FIXER,
    action: { kind: "shell", command: "cp ../answers/seeded.yaml /tmp/x" },
    expected: "golden-ledger",
  },
  // external-writes
  {
    name: "GET a path of the target",
    agent: TRIAGE,
    action: { kind: "http_request", method: "GET", url: "/api/items" },
    expected: "allowed",
  },
  {
    name: "OPTIONS on the target's origin",
    agent: TRIAGE,
    action: { kind: "http_request", method: "options", url: "http://127.0.0.1:4000/api" },
    expected: "allowed",
  },
  {
    name: "POST to an external target",
    agent: TRIAGE,
    action: { kind: "http_request", method: "POST", url: "/api/items" },
    expected: "external-writes",
  },
  {
    name: "another loopback host",
    agent: TRIAGE,
    action: { kind: "http_request", method: "GET", url: "http://localhost:4000/api" },
    expected: "external-writes",
  },
  {
    name: "another port",
    agent: TRIAGE,
    action: { kind: "http_request", method: "GET", url: "http://127.0.0.1:4001/" },
    expected: "external-writes",
  },
  {
    name: "a protocol-relative URL to elsewhere",
    agent: TRIAGE,
    action: { kind: "http_request", method: "GET", url: "//example.com/x" },
    expected: "external-writes",
  },
  {
    name: "POST when the external target allows writes",
    agent: TRIAGE,
    action: { kind: "http_request", method: "POST", url: "/api/items" },
    expected: "allowed",
    target: loadedTarget(fixture, {
      mode: "external",
      base_url: "http://127.0.0.1:4000",
      allow_writes: true,
    }),
  },
  {
    name: "DELETE on a managed target",
    agent: TRIAGE,
    action: { kind: "http_request", method: "DELETE", url: "/api/items/1" },
    expected: "allowed",
    target: loadedTarget(fixture, { mode: "managed", base_url: "http://127.0.0.1:4000" }),
  },
  {
    name: "another host on a managed target",
    agent: TRIAGE,
    action: { kind: "http_request", method: "GET", url: "http://10.0.0.1:4000/" },
    expected: "external-writes",
    target: loadedTarget(fixture, { mode: "managed", base_url: "http://127.0.0.1:4000" }),
  },
  {
    name: "a target without base_url",
    agent: TRIAGE,
    action: { kind: "http_request", method: "GET", url: "/" },
    expected: "external-writes",
    target: loadedTarget(fixture, { mode: "none" }),
  },
];

describe("checkAction", () => {
  it.each(ROWS)("$name → $expected", (row) => expectRow(row, target));

  it("says the ticket cap and that the router escalates", () => {
    const decision = checkAction(
      TRIAGE,
      { kind: "ticket_create" },
      contextFor(TRIAGE, target, { ticketsFiled: 2 }),
    );
    expect(decision.allowed === false && decision.reason).toMatch(/cap of 2.*router escalates/);
  });

  it("denies an action kind it does not know instead of throwing", () => {
    const decision = checkAction(
      FIXER,
      { kind: "format_disk" } as unknown as GuardedAction,
      contextFor(FIXER, target),
    );
    expect(decision.allowed).toBe(false);
  });
});

const writeTool = defineTool({
  name: "write_file",
  server: "files",
  description: "writes files of the target",
  input: z.object({ files: z.array(z.object({ path: z.string(), lines: z.number() })) }),
  actions: (input) => input.files.map((file) => write(file.path, file.lines)),
  run: async () => ok({}),
});

const ticketTool = defineTool({
  name: "ticket_create",
  server: "tracker",
  description: "files a ticket",
  input: z.object({}),
  actions: () => [{ kind: "ticket_create" }],
  run: async () => ok({}),
});

describe("check", () => {
  it("denies a tool that is not in the agent's allowlist and lists the allowed tools", () => {
    const decision = check(
      TRIAGE,
      writeTool,
      { files: [{ path: "src/a.ts", lines: 1 }] },
      contextFor(TRIAGE, target),
    );
    expect(decision).toMatchObject({ allowed: false, rule: "tool-allowlist" });
    expect(decision.allowed === false && decision.reason).toContain("read_file, ticket_create, http_request");
  });

  it("judges every action of a call and the first denial wins", () => {
    const input = {
      files: [
        { path: "tests/qaas/a.test.ts", lines: 1 },
        { path: "src/app.ts", lines: 1 },
      ],
    };
    expect(check(REPRODUCER, writeTool, input, contextFor(REPRODUCER, target))).toMatchObject({
      allowed: false,
      rule: "write-scope",
    });
  });

  it("counts the files of one call together against the diff budget", () => {
    const input = { files: ["src/a.ts", "src/b.ts", "src/app.ts"].map((file) => ({ path: file, lines: 1 })) };
    const context = contextFor(FIXER, target);
    expect(check(FIXER, writeTool, input, context)).toMatchObject({ allowed: false, rule: "diff-budget" });
    expect(context.guard.filesChanged.size).toBe(0);
  });

  it("turns a fault in a tool's description of its call into a denial", () => {
    const broken = defineTool({
      ...ticketTool,
      name: "read_file",
      actions: () => {
        throw new Error("cannot describe this call");
      },
    });
    const decision = check(TRIAGE, broken, {}, contextFor(TRIAGE, target));
    expect(decision).toMatchObject({ allowed: false });
    expect(decision.allowed === false && decision.reason).toContain("cannot describe this call");
  });

  it("allows a tool that declares no actions once it is in the allowlist", () => {
    const quiet = defineTool({ ...ticketTool, name: "http_request", actions: undefined });
    expect(check(TRIAGE, quiet, {}, contextFor(TRIAGE, target))).toEqual({ allowed: true });
  });

  it("does not count by itself; noteAllowed makes a third distinct file exceed a 2-file budget", () => {
    const context = contextFor(FIXER, target);
    const call = (file: string, lines = 1) => {
      const input = { files: [{ path: file, lines }] };
      const decision = check(FIXER, writeTool, input, context);
      if (decision.allowed) noteAllowed(writeTool.actions!(input, context), context);
      return decision;
    };
    expect(call("src/a.ts")).toEqual({ allowed: true });
    expect(check(FIXER, writeTool, { files: [{ path: "src/app.ts", lines: 1 }] }, context)).toEqual({
      allowed: true,
    });
    expect(call("src/b.ts")).toEqual({ allowed: true });
    expect(call("src/app.ts")).toMatchObject({ allowed: false, rule: "diff-budget" });
    expect(call("./src/a.ts", 3)).toEqual({ allowed: true });
    expect([...context.guard.filesChanged]).toEqual([
      ["src/a.ts", 4],
      ["src/b.ts", 1],
    ]);
  });

  it("counts filed tickets so the cap applies to later calls", () => {
    const context = contextFor(TRIAGE, target);
    for (let filed = 0; filed < 2; filed += 1) {
      expect(check(TRIAGE, ticketTool, {}, context)).toEqual({ allowed: true });
      noteAllowed([{ kind: "ticket_create" }], context);
    }
    expect(check(TRIAGE, ticketTool, {}, context)).toMatchObject({ allowed: false, rule: "ticket-cap" });
  });
});

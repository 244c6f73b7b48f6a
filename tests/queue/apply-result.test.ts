import { describe, expect, it } from "vitest";
import type { DefectEnvelope } from "../../src/envelope/envelope.ts";
import { applyInvocationResult } from "../../src/queue/apply-result.ts";
import type { LedgerEntry } from "../../src/store/ledger-kinds.ts";

// The coordinator applies what a worker handed back; a run file is written only when a worker may write it.

describe("applying a worker's result", () => {
  it("writes the pinned map a worker's agent saved, and no other run file it names", () => {
    const written: string[] = [];
    const recorded: string[] = [];
    const event = applyInvocationResult(
      {
        event: { type: "agent.failed", invocation: "mapper-1", error: "stopped", transient: false },
        entries: [{ kind: "warning", data: { message: "map pinned" } }],
        envelopes: [],
        worker: "worker-1",
        try: 1,
        files: [
          { name: "pinned-map.json", content: '{"version":2}\n' },
          { name: "run.json", content: '{"id":"someone-else"}\n' },
          { name: "../../escape.json", content: "{}" },
        ],
      },
      {
        readEnvelopes: (): DefectEnvelope[] => [],
        writeEnvelope: () => {},
        record: (kind): LedgerEntry => {
          recorded.push(kind);
          return { seq: recorded.length, at: new Date().toISOString(), kind, data: {} };
        },
        writeRunFile: (name, content) => written.push(`${name}=${content.trim()}`),
      },
    );
    expect(written).toEqual(['pinned-map.json={"version":2}']);
    expect(recorded).toEqual(["warning"]);
    expect(event.type).toBe("agent.failed");
  });
});

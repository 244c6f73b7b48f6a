import { z } from "zod";
import { QaasError } from "../../errors.ts";
import { RunStore } from "../../store/run-store.ts";
import { ok } from "../result.ts";
import { defineTool } from "../tool.ts";

// Which findings of this run were reproduced, read back from the `finding_reproduced` entries that
// record_reproduction wrote. Once any reproduction was recorded, TRIAGE files what REPRODUCER left
// fileable (reproduced, or explained as untestable with its evidence standing); reading the ledger (not an
// agent's prose) keeps that decision on recorded facts.

export interface ReproductionRecord {
  finding_id: string;
  reproduced: boolean;
  /** reproduced, flaky, not_reproduced or untestable, as REPRODUCER recorded it. */
  status?: string;
  /** Whether the finding may be filed after its reproduction. */
  fileable: boolean;
  flake_rate?: number;
  test?: { path: string; command: string; branch?: string };
}

const listReproductions = defineTool({
  name: "list_reproductions",
  server: "decisions",
  description:
    "List the reproductions recorded in this run (finding id, reproduced or not, status, whether it may be filed, flake rate, failing test). An empty list means no reproduction was recorded for the run.",
  input: z.strictObject({}),
  async run(_input, context) {
    let entries: ReturnType<RunStore["readLedger"]>["entries"];
    try {
      entries = RunStore.open(context.home, context.runId).readLedger().entries;
    } catch (error) {
      // A context without a run store on disk (an MCP session, a unit test) has recorded nothing.
      if (error instanceof QaasError && error.code === "RUN_NOT_FOUND") return ok({ reproductions: [] });
      throw error;
    }
    // The latest record of a finding wins: a second reproduction attempt replaces the first.
    const latest = new Map<string, ReproductionRecord>();
    for (const entry of entries) {
      if (entry.kind !== "finding_reproduced") continue;
      const id = entry.data.finding_id ?? entry.data.envelope_id;
      if (typeof id !== "string") continue;
      latest.set(id, {
        finding_id: id,
        reproduced: entry.data.reproduced === true,
        ...(typeof entry.data.status === "string" ? { status: entry.data.status } : {}),
        // Records written before `fileable` was recorded: only a reproduction made a finding fileable.
        fileable:
          typeof entry.data.fileable === "boolean" ? entry.data.fileable : entry.data.reproduced === true,
        ...(typeof entry.data.flake_rate === "number" ? { flake_rate: entry.data.flake_rate } : {}),
        ...(entry.data.test ? { test: entry.data.test as ReproductionRecord["test"] } : {}),
      });
    }
    return ok({ reproductions: [...latest.values()] });
  },
});

export const reproductionTools = [listReproductions];

import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { DefectEnvelope } from "../../envelope/envelope.ts";
import { ENVELOPE_VERSION, fingerprint, isFileable, validateEnvelope } from "../../envelope/envelope.ts";
import { type EmitResult, EnvelopeDraftSchema } from "../../envelope/envelope-draft.ts";
import type { ToolContext } from "../context.ts";
import { err, ok } from "../result.ts";
import { defineTool } from "../tool.ts";

// The only way a finding leaves an agent: validated field by field, fingerprinted, de-duplicated within
// the run, stored, remembered across runs, and held for a person when it is not fileable.

const SEEN_KEY = "envelope:fingerprints";

/** Fingerprint → envelope id of this run, rebuilt from the store so a resumed run never stores twice. */
function seenFingerprints(context: ToolContext): Map<string, string> {
  let seen = context.shared.get(SEEN_KEY) as Map<string, string> | undefined;
  if (!seen) {
    seen = new Map(context.readEnvelopes().map((envelope) => [envelope.dedupe.fingerprint, envelope.id]));
    context.shared.set(SEEN_KEY, seen);
  }
  return seen;
}

export const emitEnvelope = defineTool({
  name: "emit_envelope",
  server: "envelope",
  description:
    "Emit one finding as a DefectEnvelope draft. Answers the envelope id, or every invalid field by path so you can correct it. A finding without an artifact or failing test, or below the confidence threshold, is held for a person rather than filed.",
  input: EnvelopeDraftSchema,
  async run(value, context) {
    const fingerprintValue = fingerprint(value);
    const seen = seenFingerprints(context);
    const existing = seen.get(fingerprintValue);
    if (existing) {
      const prior = context.readEnvelopes().find((envelope) => envelope.id === existing);
      const held = prior?.tracker.state === "held";
      const result: EmitResult = {
        envelope_id: existing,
        fingerprint: fingerprintValue,
        fileable: !held,
        held,
        duplicate_of: existing,
      };
      return ok(result);
    }
    const envelope: DefectEnvelope = {
      envelope_version: ENVELOPE_VERSION,
      id: `env-${randomUUID().slice(0, 8)}`,
      run_id: context.runId,
      discovered_by: context.agent.name,
      discovered_at: new Date().toISOString(),
      domain: value.domain,
      defect_class: value.defect_class,
      title: value.title,
      summary: value.summary,
      location: value.location,
      evidence: value.evidence,
      reproduction: value.reproduction,
      impact: value.impact,
      severity: value.severity,
      confidence: value.confidence,
      suggested_owner: value.suggested_owner ?? null,
      suggested_fix_area: value.suggested_fix_area ?? null,
      autonomy_eligible: value.autonomy_eligible ?? false,
      dedupe: {
        fingerprint: fingerprintValue,
        ...(value.dedupe?.discriminator ? { discriminator: value.dedupe.discriminator } : {}),
      },
      tracker: { state: "unfiled", key: null, url: null },
    };
    const fileable = isFileable(envelope, context.system.thresholds.file_confidence);
    if (!fileable) envelope.tracker.state = "held";
    const checked = validateEnvelope(envelope);
    if (!checked.ok) {
      return err(
        `the envelope is invalid: ${checked.errors.map((error) => `${error.path}: ${error.message}`).join("; ")}`,
      );
    }
    context.writeEnvelope(envelope);
    seen.set(fingerprintValue, envelope.id);
    const memory = rememberEnvelope(context, envelope);
    context.record(
      "envelope_emitted",
      {
        envelope_id: envelope.id,
        fingerprint: fingerprintValue,
        title: envelope.title,
        domain: envelope.domain,
        defect_class: envelope.defect_class,
        severity: envelope.severity,
        location: `${envelope.location.kind} ${envelope.location.value}`,
        fileable,
        occurrences: memory.occurrences,
      },
      context.agent.name,
    );
    if (!fileable) {
      context.record(
        "envelope_held",
        { envelope_id: envelope.id, reason: heldReason(envelope, context.system.thresholds.file_confidence) },
        context.agent.name,
      );
    }
    const result: EmitResult = {
      envelope_id: envelope.id,
      fingerprint: fingerprintValue,
      fileable,
      held: !fileable,
    };
    return ok(result);
  },
});

/** Records one occurrence of an envelope's fingerprint in cross-run defect memory. */
export function rememberEnvelope(context: ToolContext, envelope: DefectEnvelope) {
  return context.memory.record({
    fingerprint: envelope.dedupe.fingerprint,
    runId: context.runId,
    envelopeId: envelope.id,
    title: envelope.title,
    domain: envelope.domain,
    defectClass: envelope.defect_class,
    location: { kind: envelope.location.kind, value: envelope.location.value },
  });
}

export function heldReason(envelope: DefectEnvelope, threshold: number): string {
  if (envelope.reproduction.not_reproducible) return "marked not reproducible";
  if ((envelope.reproduction.flake_rate ?? 0) > 0)
    return `flaky: its test failed only part of the time (flake rate ${envelope.reproduction.flake_rate})`;
  if (envelope.confidence < threshold)
    return `confidence ${envelope.confidence} is below the threshold ${threshold}`;
  return "no artifact or failing test backs it";
}

const getSystemMap = defineTool({
  name: "get_system_map",
  server: "envelope",
  description:
    "Read the system map pinned for this run. Give `section` (operations, routes, pages, channels, database, ownership, openapi) to read one part; omit it for everything.",
  input: z.strictObject({
    section: z
      .enum(["operations", "routes", "pages", "channels", "database", "ownership", "openapi"])
      .optional(),
  }),
  async run(input, context) {
    const map = context.systemMap();
    if (!map) return err("no system map is pinned for this run yet: MAPPER runs first (phase map)");
    return ok(input.section ? { [input.section]: map[input.section] } : map);
  },
});

const putArtifact = defineTool({
  name: "put_artifact",
  server: "envelope",
  description:
    "Store a text artifact of this run (an exchange, a log, a test). Answers its artifact:// URI for evidence.",
  input: z.strictObject({
    name: z
      .string()
      .min(1)
      .regex(/^[A-Za-z0-9._/-]+$/, "letters, digits, . _ - and / only"),
    content: z.string(),
  }),
  async run(input, context) {
    try {
      return ok({ uri: context.putArtifact(input.name, input.content) });
    } catch (error) {
      return err(error instanceof Error ? error.message : String(error));
    }
  },
});

const listFindings = defineTool({
  name: "list_findings",
  server: "envelope",
  description: "List this run's findings (id, class, severity, title, location, filed or held).",
  input: z.strictObject({ fileable_only: z.boolean().optional() }),
  async run(input, context) {
    const findings = context
      .readEnvelopes()
      .filter((envelope) => !input.fileable_only || envelope.tracker.state !== "held")
      .map((envelope) => ({
        id: envelope.id,
        domain: envelope.domain,
        defect_class: envelope.defect_class,
        severity: envelope.severity,
        title: envelope.title,
        location: `${envelope.location.kind} ${envelope.location.value}`,
        state: envelope.tracker.state,
        fingerprint: envelope.dedupe.fingerprint,
      }));
    return ok({ findings });
  },
});

const getFinding = defineTool({
  name: "get_finding",
  server: "envelope",
  description: "Read one finding of this run in full.",
  input: z.strictObject({ id: z.string() }),
  async run(input, context) {
    const envelope = context.readEnvelopes().find((candidate) => candidate.id === input.id);
    return envelope ? ok(envelope) : err(`no finding ${input.id} in this run (list_findings shows them)`);
  },
});

export const envelopeTools = [emitEnvelope, getSystemMap, putArtifact, listFindings, getFinding];

import { z } from "zod";
import { fingerprint } from "../../envelope/envelope.ts";
import { LOCATION_KINDS } from "../../envelope/taxonomy.ts";
import { err, ok } from "../result.ts";
import { defineTool } from "../tool.ts";
import { rememberEnvelope } from "./envelope-server.ts";

// Memory across runs: has this defect been seen before, how often, and what looks like it.

const LocationInput = z.strictObject({ kind: z.enum(LOCATION_KINDS), value: z.string().min(1) });

const fingerprintEnvelope = defineTool({
  name: "fingerprint_envelope",
  server: "defect_memory",
  description:
    "Compute the fingerprint a finding would get (domain, class, location, optional discriminator).",
  input: z.strictObject({
    domain: z.string(),
    defect_class: z.string(),
    location: LocationInput,
    discriminator: z.string().optional(),
  }),
  async run(input) {
    return ok({
      fingerprint: fingerprint({
        domain: input.domain as never,
        defect_class: input.defect_class,
        location: input.location,
        dedupe: { discriminator: input.discriminator },
      }),
    });
  },
});

const searchSimilar = defineTool({
  name: "search_similar",
  server: "defect_memory",
  description: "Find remembered defects that look like this one (shared location, title words).",
  input: z.strictObject({
    title: z.string().min(1),
    location: LocationInput.optional(),
    domain: z.string().optional(),
    limit: z.number().int().positive().max(50).optional(),
  }),
  async run(input, context) {
    return ok({ similar: context.memory.searchSimilar(input) });
  },
});

const recordOccurrence = defineTool({
  name: "record_occurrence",
  server: "defect_memory",
  description:
    "Record that a finding of this run occurred (emit_envelope already does this for new findings).",
  input: z.strictObject({ envelope_id: z.string() }),
  async run(input, context) {
    const envelope = context.readEnvelopes().find((candidate) => candidate.id === input.envelope_id);
    if (!envelope) return err(`no finding ${input.envelope_id} in this run`);
    return ok(rememberEnvelope(context, envelope));
  },
});

const getOccurrences = defineTool({
  name: "get_occurrences",
  server: "defect_memory",
  description: "Every run in which a fingerprint was seen.",
  input: z.strictObject({ fingerprint: z.string() }),
  async run(input, context) {
    return ok({ occurrences: context.memory.occurrences(input.fingerprint) });
  },
});

export const defectMemoryTools = [fingerprintEnvelope, searchSimilar, recordOccurrence, getOccurrences];

import { z } from "zod";
import { EnvelopeObjectSchema, refineClassInDomain } from "./envelope.ts";

/**
 * What an agent hands to `emit_envelope`: the envelope minus what the tool fills in itself (version, id,
 * run, author, time, fingerprint, tracker state). Probe tools answer with drafts of this shape, so a
 * builtin playbook can emit them as they are and a model can inspect, edit or drop them first.
 */
export const EnvelopeDraftSchema = EnvelopeObjectSchema.pick({
  domain: true,
  defect_class: true,
  title: true,
  summary: true,
  location: true,
  evidence: true,
  reproduction: true,
  impact: true,
  severity: true,
  confidence: true,
})
  .extend({
    suggested_owner: z.string().nullable().optional(),
    suggested_fix_area: z.string().nullable().optional(),
    autonomy_eligible: z.boolean().optional(),
    dedupe: z.strictObject({ discriminator: z.string().optional() }).optional(),
  })
  .superRefine(refineClassInDomain);

export type EnvelopeDraft = z.infer<typeof EnvelopeDraftSchema>;

/** What `emit_envelope` answers. */
export interface EmitResult {
  envelope_id: string;
  fingerprint: string;
  fileable: boolean;
  /** Held for a person: below the confidence threshold or without evidence. */
  held: boolean;
  /** Set when this run already emitted an envelope with the same fingerprint. */
  duplicate_of?: string;
}

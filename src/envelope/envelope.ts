import { createHash } from "node:crypto";
import { z } from "zod";
import { normalizeEndpoint, normalizePath } from "./location.ts";
import { DEFECT_CLASSES, DOMAIN_CLASSES, DOMAINS, LOCATION_KINDS, SEVERITIES } from "./taxonomy.ts";

export const ENVELOPE_VERSION = 1;
export const ARTIFACT_URI = /^artifact:\/\/[A-Za-z0-9._-]+\/.+$/;

const LocationRefSchema = z.strictObject({
  kind: z.enum(LOCATION_KINDS),
  value: z.string().min(1),
});

export const EvidenceSchema = z.strictObject({
  kind: z.enum(["artifact", "failing_test", "exchange", "log", "note"]),
  description: z.string().min(1),
  uri: z.string().regex(ARTIFACT_URI, "must be artifact://<run>/<name>").optional(),
  test: z
    .strictObject({
      path: z.string().min(1),
      name: z.string().optional(),
      command: z.string().min(1),
      branch: z.string().optional(),
    })
    .optional(),
});

export const EnvelopeObjectSchema = z.strictObject({
  envelope_version: z.literal(ENVELOPE_VERSION),
  id: z.string().min(1),
  run_id: z.string().min(1),
  discovered_by: z.string().min(1),
  discovered_at: z.iso.datetime({ offset: true }),
  domain: z.enum(DOMAINS),
  defect_class: z.enum(DEFECT_CLASSES as [string, ...string[]]),
  title: z.string().min(1).max(200),
  summary: z.string().min(1),
  location: LocationRefSchema.extend({
    /** Other places the same defect shows (the files of a cycle, a second route). */
    related: z.array(LocationRefSchema).optional(),
    /** A source pointer for people; never part of the fingerprint. */
    source: z.strictObject({ file: z.string(), line: z.number().int().positive().optional() }).optional(),
  }),
  evidence: z.array(EvidenceSchema),
  reproduction: z.strictObject({
    steps: z.array(z.string()),
    curl: z.string().optional(),
    test: z.strictObject({ path: z.string(), command: z.string(), branch: z.string().optional() }).optional(),
    not_reproducible: z.boolean().optional(),
    /**
     * The test measures the target with the data its probe put there (a collection grown to show a query
     * per item, a slow answer at size): a reset removes that data, so a pass after one proves nothing.
     */
    needs_probe_data: z.boolean().optional(),
    flake_rate: z.number().min(0).max(1).optional(),
  }),
  impact: z.string().min(1),
  severity: z.enum(SEVERITIES),
  confidence: z.number().min(0).max(1),
  suggested_owner: z.string().nullable(),
  suggested_fix_area: z.string().nullable(),
  autonomy_eligible: z.boolean(),
  dedupe: z.strictObject({
    fingerprint: z.string(),
    /** Tells apart two defects of one class at one place (a parameter name, a column). */
    discriminator: z.string().optional(),
    duplicate_of: z.string().nullable().optional(),
  }),
  tracker: z.strictObject({
    state: z.enum(["unfiled", "held", "filed", "duplicate"]),
    key: z.string().nullable(),
    url: z.string().nullable(),
  }),
});

/** The class must belong to the domain; shared by the envelope and the draft agents emit. */
export function refineClassInDomain(
  envelope: { domain: (typeof DOMAINS)[number]; defect_class: string },
  context: z.RefinementCtx,
): void {
  if (!(DOMAIN_CLASSES[envelope.domain] as readonly string[]).includes(envelope.defect_class)) {
    context.addIssue({
      code: "custom",
      path: ["defect_class"],
      message: `"${envelope.defect_class}" is not a class of domain "${envelope.domain}" (valid: ${DOMAIN_CLASSES[envelope.domain].join(", ")})`,
    });
  }
}

export const EnvelopeSchema = EnvelopeObjectSchema.superRefine(refineClassInDomain);

export type DefectEnvelope = z.infer<typeof EnvelopeSchema>;
export type Evidence = z.infer<typeof EvidenceSchema>;

export interface FieldError {
  path: string;
  message: string;
}

export type EnvelopeValidation = { ok: true; envelope: DefectEnvelope } | { ok: false; errors: FieldError[] };

export function formatIssuePath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? "(root)" : path.map((part) => String(part)).join(".");
}

export function validateEnvelope(input: unknown): EnvelopeValidation {
  const parsed = EnvelopeSchema.safeParse(input);
  if (parsed.success) return { ok: true, envelope: parsed.data };
  return {
    ok: false,
    errors: parsed.error.issues.map((issue) => ({
      path: formatIssuePath(issue.path),
      message: issue.message,
    })),
  };
}

/** An artifact or a failing test, or it is not a finding. */
export function hasEvidence(envelope: DefectEnvelope): boolean {
  return envelope.evidence.some(
    (item) =>
      (item.kind === "artifact" && item.uri !== undefined) ||
      (item.kind === "failing_test" && item.test !== undefined) ||
      (item.kind === "exchange" && item.uri !== undefined),
  );
}

export function isFileable(envelope: DefectEnvelope, threshold: number): boolean {
  return (
    hasEvidence(envelope) &&
    envelope.confidence >= threshold &&
    envelope.reproduction.not_reproducible !== true &&
    // A test that failed only some of the time proves nothing yet: flaky findings wait for a person.
    (envelope.reproduction.flake_rate ?? 0) === 0
  );
}

const CONCRETE_SEGMENT = /^(\d+|[0-9a-f]{8}-[0-9a-f-]{27,}|[0-9a-f]{24,})$/i;

/** Location value in a form that does not depend on ids, parameter names, case or trailing slashes. */
export function canonicalLocation(kind: string, value: string): string {
  switch (kind) {
    case "endpoint":
    case "page":
    case "channel": {
      const canonical = kind === "endpoint" ? normalizeEndpoint(value) : normalizePath(value);
      return canonical
        .split("/")
        .map((segment) => (CONCRETE_SEGMENT.test(segment) ? "{}" : segment))
        .join("/");
    }
    case "table":
      return value.trim().toLowerCase();
    case "file":
      return value.trim().replace(/^\.\//, "").replace(/\\/g, "/");
    default:
      return value.trim().toLowerCase();
  }
}

/**
 * Stable across wording, line numbers, commit and time: only what the defect *is* (domain, class,
 * canonical place and an optional discriminator) goes in, so two agents describing it differently collide.
 */
export function fingerprint(
  envelope: Pick<DefectEnvelope, "domain" | "defect_class" | "location"> & {
    dedupe?: Pick<DefectEnvelope["dedupe"], "discriminator">;
  },
): string {
  const parts = [
    envelope.domain,
    envelope.defect_class,
    envelope.location.kind,
    canonicalLocation(envelope.location.kind, envelope.location.value),
    (envelope.dedupe?.discriminator ?? "").trim().toLowerCase(),
  ];
  return `fp_${createHash("sha256").update(parts.join("\u0000")).digest("hex").slice(0, 24)}`;
}

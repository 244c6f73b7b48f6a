import { z } from "zod";
import { BudgetSchema, SeatRefSchema } from "./agent-schema.ts";

export const RunModeSchema = z.strictObject({
  description: z.string().optional(),
  roster: z.array(z.string()).min(1),
  budget: BudgetSchema.default({}),
  /** pr-check: limit discovery to what a change touched. */
  focus: z.enum(["all", "changed"]).default("all"),
  /** bug-bash: how many charter sessions, how many at once, and each one's step and minute budget. */
  charters: z
    .strictObject({
      /** Charters derived from the map when none is given (given ones are all walked, up to 12). */
      max: z.number().int().min(1).max(12).default(4),
      /** Sessions walking at once, each in a browser context of its own. */
      parallel: z.number().int().min(1).max(4).default(2),
      steps: z.number().int().min(1).max(12).default(6),
      minutes: z.number().int().min(3).max(15).default(5),
    })
    .optional(),
});

// Credentials (trackers, an artifact bucket) are named, never written: `secret_ref:ENV_NAME`, read when used.
const TrackerSecretRef = z
  .string()
  .regex(/^secret_ref:[A-Z_][A-Z0-9_]*$/, "must be secret_ref:ENV_NAME; never write a token in the config");

const GithubTrackerSchema = z.strictObject({
  owner: z.string().min(1),
  repo: z.string().min(1),
  token: TrackerSecretRef,
  /** API root; only for GitHub Enterprise Server (`https://HOST/api/v3`). */
  base_url: z.url().optional(),
});

const JiraTrackerSchema = z.strictObject({
  /** The site, e.g. `https://example.atlassian.net`. */
  base_url: z.url(),
  project: z.string().regex(/^[A-Z][A-Z0-9_]+$/, "must be a Jira project key such as QA"),
  /** The account's email, or `secret_ref:ENV_NAME` to keep it out of the file. */
  email: z.string().min(1),
  token: TrackerSecretRef,
  issue_type: z.string().min(1).default("Bug"),
});

function requireTrackerSettings(
  tracker: { kind: "local" | "jira" | "github"; github?: unknown; jira?: unknown },
  context: z.RefinementCtx,
): void {
  if (tracker.kind === "local") return;
  if (tracker[tracker.kind] === undefined) {
    const needs =
      tracker.kind === "github"
        ? "owner, repo and token (secret_ref:ENV_NAME)"
        : "base_url, project, email, token (secret_ref:ENV_NAME) and issue_type";
    context.addIssue({
      code: "custom",
      path: [tracker.kind],
      message: `tracker.kind is ${tracker.kind}, so tracker.${tracker.kind} is required: ${needs}`,
    });
  }
}

export const SystemConfigSchema = z.strictObject({
  version: z.literal(1),
  run_modes: z.record(z.string(), RunModeSchema),
  thresholds: z.strictObject({
    /** Confidence at or above which a finding with evidence is filed; below it is held for a person. */
    file_confidence: z.number().min(0).max(1).default(0.7),
    /** Quality gate for `qaas sweep`. */
    min_recall: z.number().min(0).max(1).default(0.8),
    min_precision: z.number().min(0).max(1).default(0.9),
  }),
  loop: z.strictObject({
    max_reopens: z.number().int().min(0).default(2),
    max_round_trips: z.number().int().min(0).default(3),
  }),
  retries: z
    .strictObject({
      attempts: z.number().int().min(0).default(2),
      backoff_ms: z.number().int().min(0).default(500),
    })
    .default({ attempts: 2, backoff_ms: 500 }),
  seats: z.strictObject({
    worker: SeatRefSchema,
    orchestrator: z.union([z.strictObject({ backend: z.literal("rules") }), SeatRefSchema]),
  }),
  ticket_cap: z.number().int().min(0).default(25),
  concurrency: z.number().int().positive().default(3),
  /** Queue mode: limits held over every worker together (each target's own cap is its profile's). */
  queue: z
    .strictObject({
      /** Requests in flight to all targets together, over every worker; no cap when absent. */
      max_requests_in_flight: z.number().int().positive().optional(),
      /**
       * Where workers share artifacts (screenshots, traces, generated tests) when their store folders are
       * their own: a folder every machine mounts, or an S3-compatible bucket. Absent: the store folder.
       */
      artifacts: z
        .union([
          z.strictObject({ folder: z.string().min(1) }),
          z.strictObject({
            s3: z.strictObject({
              endpoint: z.string().url(),
              bucket: z.string().min(1),
              region: z.string().optional(),
              prefix: z.string().optional(),
              access_key_id: TrackerSecretRef,
              secret_access_key: TrackerSecretRef,
            }),
          }),
        ])
        .optional(),
    })
    .default({}),
  forbidden_paths: z
    .record(z.string(), z.array(z.string()))
    .describe("path classes (migrations, auth, payment, secrets, infrastructure, ci) → globs"),
  forbidden_commands: z.array(z.string()).default([]),
  tracker: z
    .strictObject({
      kind: z.enum(["local", "jira", "github"]).default("local"),
      github: GithubTrackerSchema.optional(),
      jira: JiraTrackerSchema.optional(),
    })
    .superRefine(requireTrackerSettings)
    .default({ kind: "local" }),
});
export type SystemConfig = z.infer<typeof SystemConfigSchema>;
export type RunMode = z.infer<typeof RunModeSchema>;
export type TrackerConfig = SystemConfig["tracker"];

import { z } from "zod";

export const LAYERS = ["map", "discover", "triage", "remediate", "verify", "report"] as const;
export const PHASES = ["map", "discover", "reproduce", "file", "verify", "report"] as const;
export type Phase = (typeof PHASES)[number];

export const SeatRefSchema = z.strictObject({
  backend: z.enum(["builtin", "openai-compatible", "anthropic", "claude-code", "mock"]),
  model: z.string().optional(),
  base_url: z.string().optional(),
  /** The NAME of the environment variable holding the key; the key itself is read at call time. */
  api_key_env: z.string().optional(),
  is_local: z.boolean().optional(),
  /** USD per million input / output tokens, for the cost record. */
  price: z.strictObject({ input_per_mtok: z.number().min(0), output_per_mtok: z.number().min(0) }).optional(),
  timeout_seconds: z.number().positive().optional(),
  /** Output tokens one model call may produce; bounds a call's worst-case cost for the budget check. */
  max_output_tokens: z.number().int().positive().optional(),
});
export type SeatRef = z.infer<typeof SeatRefSchema>;

export const BudgetSchema = z.strictObject({
  usd: z.number().min(0).optional(),
  tokens: z.number().int().min(0).optional(),
});

export const AgentPolicySchema = z.strictObject({
  /** Globs relative to the target root this agent may write; empty for every non-writer. */
  write_paths: z.array(z.string()).default([]),
  /** Branch patterns (glob, `*` within a segment) this agent may create, commit and push. */
  branch_patterns: z.array(z.string()).default([]),
  /** Distinct files one run of this agent may change, and changed lines in all. */
  diff_budget: z.strictObject({ files: z.number().int().min(0), lines: z.number().int().min(0) }).optional(),
  /** Whether this agent may file tickets (subject to the run's ticket cap). */
  may_file_tickets: z.boolean().default(false),
  /** May not edit the failing test recorded on the envelope it is fixing. */
  immutable_test: z.boolean().default(false),
});
export type AgentPolicy = z.infer<typeof AgentPolicySchema>;

/**
 * On a model seat, the agent's builtin playbook runs first as a deterministic gate; the model reads on
 * only when the gate's decision (the `field` of its `tool` call) is `passes`, and records its own.
 */
export const AgentGateSchema = z.strictObject({
  tool: z.string(),
  field: z.string().default("decision"),
  passes: z.string(),
});
export type AgentGate = z.infer<typeof AgentGateSchema>;

export const AgentConfigSchema = z.strictObject({
  name: z.string().regex(/^[A-Z][A-Z0-9_]*$/, "upper-case agent name, e.g. MAPPER"),
  description: z.string().min(1),
  layer: z.enum(LAYERS),
  phase: z.enum(PHASES),
  /** `per_run`: once per run; `per_finding`: a fresh invocation for each finding; `per_ticket`: verify loop. */
  cardinality: z.enum(["per_run", "per_finding", "per_ticket"]).default("per_run"),
  seat: SeatRefSchema.optional(),
  budget: BudgetSchema.default({}),
  max_turns: z.number().int().positive().default(30),
  /** The part this agent plays in the verify loop, which the router drives by role, never by name. */
  loop_role: z.enum(["verifier", "fixer", "reviewer"]).optional(),
  /** Runs alone, after the concurrent agents of its phase: for measurements a busy target would spoil. */
  exclusive: z.boolean().default(false),
  tools: z.array(z.string()).default([]),
  must_call: z.array(z.string()).default([]),
  policy: AgentPolicySchema.default({
    write_paths: [],
    branch_patterns: [],
    may_file_tickets: false,
    immutable_test: false,
  }),
  /** Paths relative to this YAML file; defaults: src/agents/prompts/<NAME>.md and src/agents/playbooks/<name>.ts. */
  prompt: z.string().optional(),
  playbook: z.string().optional(),
  gate: AgentGateSchema.optional(),
  /** Which capability of a target this agent needs to be useful (see targets/capabilities). */
  requires: z
    .array(z.enum(["source", "live", "openapi", "ui", "websocket", "database", "users", "git"]))
    .default([]),
});
export type AgentConfig = z.infer<typeof AgentConfigSchema>;

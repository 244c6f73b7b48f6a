import { z } from "zod";

/** `secret_ref:ENV_NAME` — the only way a profile may carry a credential. */
export const SECRET_REF = /^secret_ref:[A-Z_][A-Z0-9_]*$/;
const SecretRef = z
  .string()
  .regex(SECRET_REF, "must be secret_ref:ENV_NAME; never write a credential in a profile");

const Command = z.strictObject({
  /** A shell command, run from the target's source root. */
  command: z.string().min(1),
  /** Extra environment; a value may be `secret_ref:NAME`, resolved when the command runs. */
  env: z.record(z.string(), z.string()).optional(),
  timeout_seconds: z.number().positive().optional(),
});

const Endpoint = z.string().regex(/^[A-Za-z]+ \/\S*$/, "METHOD /path");

const LoginRecipe = z.strictObject({
  /**
   * json: POST a JSON body, the token in the answer (or a session cookie); form: load the sign-in page, post
   * its form (CSRF token included) and keep the session cookies; bearer/api_key: a static token from `token`.
   */
  kind: z.enum(["json", "form", "bearer", "api_key"]),
  /** `METHOD /path` of the sign-in operation (json; form too, unless `page` shows the form to post). */
  endpoint: z.string().optional(),
  /**
   * The page to load first: for a form, the page that shows the sign-in form (default: the endpoint's path,
   * then /login); for json, a page that sets the CSRF cookie a cookie-authenticated API expects.
   */
  page: z.string().optional(),
  /** Body template; `{username}`, `{password}` and `{email}` are filled from the user (form: found by default). */
  body: z.record(z.string(), z.string()).optional(),
  /**
   * Where the token comes back: `body:<json.path>`, `header:<name>` or `cookie:<name>`. Optional: a JSON
   * answer is searched for a token, and a form sign-in's credential is its session cookies (or, when its
   * post sets none, the token of its JSON answer, as an OAuth2 password grant's `access_token`).
   */
  token_from: z.string().optional(),
  /** How the token goes on each request: `header:<Name>` (with `scheme`), `cookie:<name>` or `query:<name>`. */
  apply_as: z.string().default("header:Authorization"),
  scheme: z.string().default("Bearer"),
  /** Seconds a token lives; the session signs in again before that (and when the session visibly ends). */
  ttl_seconds: z.number().positive().optional(),
});

/** How to register throw-away users, so a check that needs two users of one role can run with one. */
const SignupRecipe = z.strictObject({
  /** `METHOD /path` of the registration operation. */
  endpoint: Endpoint,
  kind: z.enum(["json", "form"]),
  /** For a form: the page that shows the registration form (default: the endpoint's path). */
  page: z.string().optional(),
  /** Body template with `{username}`, `{password}` and `{email}` (form: the form's fields are found by default). */
  body: z.record(z.string(), z.string()).optional(),
  /** The role a new account gets (default: user). */
  role: z.string().default("user"),
  /** Must be true: registering users writes to the target, which only the profile may allow. */
  allowed: z.boolean(),
  /** Throw-away users registered at most per run. */
  max_users: z.number().int().positive().max(10).default(3),
});

const Auth = z.strictObject({
  login: LoginRecipe,
  signup: SignupRecipe.optional(),
  /**
   * `METHOD /path` operations that look like signing out (logout, sign_out, DELETE /session…) but do not end
   * the run's sessions: probes may send them. Every other sign-out is refused.
   */
  allow_sign_out: z.array(Endpoint).default([]),
});

const User = z.strictObject({
  name: z.string().regex(/^[a-z0-9_-]+$/i),
  role: z.string().min(1),
  tenant: z.string().optional(),
  username: z.string().optional(),
  password: SecretRef.optional(),
  /** For `bearer`/`api_key` logins: the token itself, by reference. */
  token: SecretRef.optional(),
});

export const TargetProfileSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, "lower-case letters, digits, - and _"),
  description: z.string().optional(),
  source: z.strictObject({
    /** Path to the code, relative to the profile file's folder. */
    path: z.string().optional(),
    git_url: z.string().optional(),
    ref: z.string().optional(),
  }),
  environment: z.strictObject({
    mode: z.enum(["none", "external", "managed", "compose"]),
    base_url: z.string().url().optional(),
    health_path: z.string().default("/health"),
    start: Command.optional(),
    reset: Command.optional(),
    seed: Command.optional(),
    stop: Command.optional(),
    /** NAME=value lines loaded into the run's environment (never overriding it), relative to this file; for demo targets. */
    secrets_file: z.string().optional(),
    /** external targets: whether probes may send writes (POST/PUT/PATCH/DELETE). */
    allow_writes: z.boolean().default(false),
    startup_timeout_seconds: z.number().positive().default(30),
  }),
  api: z
    .strictObject({
      /** A file relative to the source root, or a URL path/absolute URL served by the target. */
      openapi: z.string().optional(),
      base_path: z.string().optional(),
      /** Look for a document the profile does not name (in the source tree, at the usual URLs); default true. */
      discover: z.boolean().default(true),
      /** The API is public by design (its schema is published): introspection and suggestions are no defect. */
      public: z.boolean().default(false),
      /** `METHOD /path` operations no probe may send (a test-only reset, a logout, a payment capture). */
      exclude: z.array(z.string().regex(/^[A-Za-z]+ \/\S*$/, "METHOD /path")).default([]),
    })
    .optional(),
  ui: z.strictObject({ entry: z.string().default("/") }).optional(),
  websocket: z
    .strictObject({
      paths: z.array(z.string()).min(1),
      /** How a socket carries the token: `query:<name>`, `header:<Name>` or `message:<json field>`. */
      auth: z.string().default("query:token"),
    })
    .optional(),
  database: z
    .strictObject({
      kind: z.enum(["sqlite", "postgres"]),
      /** sqlite: file relative to the source root. */
      path: z.string().optional(),
      url: SecretRef.optional(),
      /** How to see every SQL statement: the env var that switches it on and the file it writes. */
      statement_log: z
        .strictObject({
          env: z.record(z.string(), z.string()),
          file: z.string(),
        })
        .optional(),
    })
    .optional(),
  tests: z.strictObject({ command: z.string(), path: z.string().optional() }).optional(),
  /** What agents may do with the branches they commit: nothing leaves this machine unless push is allowed. */
  vcs: z
    .strictObject({
      allow_push: z.boolean().default(false),
      remote: z.string().default("origin"),
      /** REPRODUCER commits each reproduced finding's test on its own qa/repro/* branch (off by default). */
      repro_branches: z.boolean().default(false),
    })
    .optional(),
  auth: Auth.optional(),
  users: z.array(User).default([]),
  /** Declared layers, outermost first, as folder globs (else inferred from folder names). */
  layers: z.array(z.strictObject({ name: z.string(), paths: z.array(z.string()).min(1) })).optional(),
  entry_points: z.array(z.string()).optional(),
  budgets: z
    .strictObject({
      slow_endpoint_ms: z.number().positive().default(500),
      /**
       * Requests one agent may send in a run. AUDITOR runs some twenty techniques, each with its own cap,
       * over every operation: a budget that runs out leaves the last technique to start with nothing.
       */
      max_requests_per_agent: z.number().int().positive().default(12000),
      concurrency: z.number().int().positive().default(8),
    })
    .optional(),
  /** The answer key; excluded from every tool that reads the target's files. */
  golden_ledger: z.string().optional(),
});

export type TargetProfile = z.infer<typeof TargetProfileSchema>;

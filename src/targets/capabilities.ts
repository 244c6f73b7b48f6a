import fs from "node:fs";
import path from "node:path";
import type { AgentConfig } from "../config/agent-schema.ts";
import { displayPath } from "../config/config-errors.ts";
import type { LoadedAgent } from "../config/load-config.ts";
import type { LoadedTarget } from "../tools/context.ts";

// Which agents can usefully run against a target, what each will work from, and for those that cannot,
// what is missing and how to add it. A profile is a hint, not a precondition: the operation inventory,
// channels and the database count wherever they were found (the latest system map, a static read of
// the source), and an agent is refused only when it truly has nothing to work on. Offline.

export type Capability = AgentConfig["requires"][number];

export interface AgentCapability {
  agent: string;
  canRun: boolean;
  reasons: string[];
  /** What the agent will work from, when it can run (`212 operations — 0 documented, 180 from source`). */
  works_from?: string;
}

/** What is known about a target beyond its profile: from its latest system map, or a static read of its source. */
export interface TargetEvidence {
  /** Where this came from, for a person: `system map v3 (2026-05-01T…)`, `a static read of the source`. */
  basis: string;
  /** Operations by source (`openapi`, `source`, `frontend`…), an operation counted once per source. */
  operations: { total: number; by_source: Record<string, number> };
  /** The OpenAPI document the inventory holds, and how it was found. */
  openapi?: { source: string; version: string; found: string };
  channels: Array<{ path: string; protocol?: string; seen_in: string[] }>;
  /** The database and where it was found: `profile`, a map's `found.in`, a `file:line` of the source. */
  database?: { kind: string; path?: string; url_env?: string; in: string; tables?: number };
  /** Pages a crawl reached (a saved map only). */
  pages?: number;
  /** Source files read, when the evidence came from reading them. */
  source_files?: { javascript: number; python: number };
  notes: string[];
}

type Assessment = { ok: true; basis: string } | { ok: false; reason: string };

/** Capabilities in the order that says most about an agent: its most specific need describes its work. */
const SPECIFICITY: Capability[] = [
  "websocket",
  "database",
  "openapi",
  "ui",
  "live",
  "git",
  "source",
  "users",
];

/** Words for each source of operations, in the order they are listed. */
const SOURCE_WORDS: Array<[string, string]> = [
  ["source", "from source"],
  ["form", "from forms"],
  ["link", "from links"],
  ["crawl", "from the crawl"],
  ["frontend", "from the frontend"],
  ["traffic", "from traffic"],
  ["graphql", "from GraphQL"],
];

export function capabilities(
  target: LoadedTarget,
  agents: LoadedAgent[],
  evidence?: TargetEvidence,
): AgentCapability[] {
  const assessed = assessCapabilities(target, evidence);
  return agents.map(({ config }) => {
    const reasons = config.requires.flatMap((capability) => {
      const assessment = assessed.get(capability);
      return assessment && !assessment.ok ? [assessment.reason] : [];
    });
    if (reasons.length > 0) return { agent: config.name, canRun: false, reasons };
    const describing = SPECIFICITY.find((capability) => config.requires.includes(capability));
    const assessment = describing ? assessed.get(describing) : undefined;
    return {
      agent: config.name,
      canRun: true,
      reasons,
      works_from: assessment?.ok ? assessment.basis : "needs nothing from the target",
    };
  });
}

/** Every capability, met (with what meets it) or not (with how to add it). */
export function assessCapabilities(
  target: LoadedTarget,
  evidence?: TargetEvidence,
): Map<Capability, Assessment> {
  const { profile } = target;
  const assessed = new Map<Capability, Assessment>();
  const hasSource = target.root !== undefined && isDirectory(target.root);
  const environment = profile.environment;
  const live = environment.mode !== "none" && environment.base_url !== undefined;
  const baseUrl = environment.base_url ?? "";

  assessed.set(
    "source",
    hasSource
      ? { ok: true, basis: `source at ${displayPath(target.root!)}${filesRead(evidence)}` }
      : {
          ok: false,
          reason:
            target.root === undefined
              ? "no source code: add source.path (a folder relative to the profile)"
              : `source folder ${target.root} does not exist: fix source.path`,
        },
  );
  assessed.set(
    "live",
    live
      ? { ok: true, basis: `${baseUrl} (${environment.mode})${operationCount(evidence)}` }
      : {
          ok: false,
          reason:
            environment.mode === "none"
              ? "no running app: set environment.mode (managed, external or compose) and environment.base_url"
              : "no running app: add environment.base_url",
        },
  );
  assessed.set("openapi", assessOperations(target, evidence, hasSource, live));
  if (profile.ui === undefined)
    assessed.set("ui", { ok: false, reason: "no user interface: add ui.entry (the entry page path)" });
  else if (!live)
    assessed.set("ui", {
      ok: false,
      reason: "the UI needs a running app: set environment.mode and environment.base_url",
    });
  else
    assessed.set("ui", {
      ok: true,
      basis: `entry ${profile.ui.entry} on ${baseUrl}${evidence?.pages ? ` (${evidence.pages} pages mapped)` : ""}`,
    });
  assessed.set("websocket", assessChannels(target, evidence));
  assessed.set("database", assessDatabase(target, evidence));
  const usersWithCredentials = profile.users.filter(
    (user) => user.password !== undefined || user.token !== undefined,
  );
  assessed.set(
    "users",
    usersWithCredentials.length >= 2
      ? {
          ok: true,
          basis: `${usersWithCredentials.length} users (${usersWithCredentials.map((user) => user.name).join(", ")})`,
        }
      : {
          ok: false,
          reason: `needs two users with credentials for cross-user checks, found ${usersWithCredentials.length}: add users[] with password or token as secret_ref:NAME`,
        },
  );
  assessed.set(
    "git",
    hasSource && isInsideGitRepository(target.root!)
      ? { ok: true, basis: `git checkout at ${displayPath(target.root!)}` }
      : {
          ok: false,
          reason: hasSource
            ? `${target.root} is not a git repository: run git init there`
            : "no git repository: add source.path to a git checkout",
        },
  );
  return assessed;
}

/**
 * The operation inventory: whatever evidence found, else (profile only) a named document or source to
 * read. A live app is always something to work on: the map phase crawls it.
 */
function assessOperations(
  target: LoadedTarget,
  evidence: TargetEvidence | undefined,
  hasSource: boolean,
  live: boolean,
): Assessment {
  const document = target.profile.api?.openapi;
  if (evidence && evidence.operations.total > 0) return { ok: true, basis: describeOperations(evidence) };
  if (evidence && live)
    return {
      ok: true,
      basis: `no operations known yet: the map phase crawls ${target.profile.environment.base_url}${document ? ` and reads ${document}` : ""}`,
    };
  if (!evidence && (document !== undefined || hasSource || live))
    return {
      ok: true,
      basis: document
        ? `the OpenAPI document ${document}`
        : "operations the map phase finds in the source and the live app",
    };
  return {
    ok: false,
    reason: live
      ? "nothing to work on: no operations found"
      : "nothing to work on: no OpenAPI document, no routes in the source, and no running app to crawl: add api.openapi, source.path or environment.base_url",
  };
}

/** `212 operations — 0 documented, 180 from source, 32 from the frontend; document openapi.yaml (profile)` */
export function describeOperations(evidence: TargetEvidence): string {
  const { total, by_source: bySource } = evidence.operations;
  const parts = [`${bySource.openapi ?? 0} documented`];
  for (const [source, words] of SOURCE_WORDS)
    if (bySource[source]) parts.push(`${bySource[source]} ${words}`);
  const document = evidence.openapi
    ? `; document ${evidence.openapi.source} (${evidence.openapi.found})`
    : "";
  return `${total} operation${total === 1 ? "" : "s"} — ${parts.join(", ")}${document}`;
}

function assessChannels(target: LoadedTarget, evidence: TargetEvidence | undefined): Assessment {
  const channels = new Map<string, { protocol?: string; seen_in: Set<string> }>();
  for (const path of target.profile.websocket?.paths ?? [])
    channels.set(path, { seen_in: new Set(["profile"]) });
  for (const channel of evidence?.channels ?? []) {
    const known = channels.get(channel.path) ?? { seen_in: new Set<string>() };
    known.protocol ??= channel.protocol;
    for (const seen of channel.seen_in) known.seen_in.add(seen);
    channels.set(channel.path, known);
  }
  if (channels.size === 0)
    return {
      ok: false,
      reason: "no WebSocket channel in the profile, the map or the source: add websocket.paths",
    };
  const described = [...channels].map(
    ([path, channel]) =>
      `${channel.protocol ? `${channel.protocol} ` : ""}${path} from ${[...channel.seen_in].join(" and ")}`,
  );
  return {
    ok: true,
    basis: `${channels.size} channel${channels.size === 1 ? "" : "s"} (${described.join(", ")})`,
  };
}

function assessDatabase(target: LoadedTarget, evidence: TargetEvidence | undefined): Assessment {
  const declared = target.profile.database;
  const database = declared
    ? {
        kind: declared.kind,
        path: declared.path,
        url_env: declared.url?.replace(/^secret_ref:/, ""),
        in: "profile",
        tables: evidence?.database?.tables,
      }
    : evidence?.database;
  if (!database)
    return {
      ok: false,
      reason: "no database in the profile, the map or the source: add database (kind and path or url)",
    };
  const where = database.path ?? (database.url_env ? `from ${database.url_env}` : "");
  const found = database.in === "profile" ? "profile" : `found in ${database.in}`;
  const tables = database.tables !== undefined ? `, ${database.tables} tables` : "";
  return { ok: true, basis: `${database.kind}${where ? ` ${where}` : ""} (${found}${tables})` };
}

function filesRead(evidence: TargetEvidence | undefined): string {
  const files = evidence?.source_files;
  if (!files) return "";
  return ` (${files.javascript} JavaScript/TypeScript, ${files.python} Python files)`;
}

function operationCount(evidence: TargetEvidence | undefined): string {
  return evidence && evidence.operations.total > 0 ? `: ${evidence.operations.total} operations` : "";
}

function isDirectory(folder: string): boolean {
  return fs.existsSync(folder) && fs.statSync(folder).isDirectory();
}

/** A `.git` folder or file (worktrees, submodules) in the folder or any parent. */
function isInsideGitRepository(folder: string): boolean {
  let current = path.resolve(folder);
  for (;;) {
    if (fs.existsSync(path.join(current, ".git"))) return true;
    const parent = path.dirname(current);
    if (parent === current) return false;
    current = parent;
  }
}

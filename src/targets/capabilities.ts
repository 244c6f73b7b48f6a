import fs from "node:fs";
import path from "node:path";
import type { AgentConfig } from "../config/agent-schema.ts";
import type { LoadedAgent } from "../config/load-config.ts";
import type { LoadedTarget } from "../tools/context.ts";

// Which agents can usefully run against a target, and for those that cannot, what is missing and which
// profile key would add it. Offline: it looks at the profile and the disk, never at the network.

export type Capability = AgentConfig["requires"][number];

export interface AgentCapability {
  agent: string;
  canRun: boolean;
  reasons: string[];
}

export function capabilities(target: LoadedTarget, agents: LoadedAgent[]): AgentCapability[] {
  const missing = missingCapabilities(target);
  return agents.map(({ config }) => {
    const reasons = config.requires.flatMap((capability) => {
      const reason = missing.get(capability);
      return reason === undefined ? [] : [reason];
    });
    return { agent: config.name, canRun: reasons.length === 0, reasons };
  });
}

/** For each capability the target lacks, a sentence naming what is missing and how to add it. */
export function missingCapabilities(target: LoadedTarget): Map<Capability, string> {
  const { profile } = target;
  const missing = new Map<Capability, string>();
  const hasSource = target.root !== undefined && isDirectory(target.root);
  if (!hasSource) {
    missing.set(
      "source",
      target.root === undefined
        ? "no source code: add source.path (a folder relative to the profile)"
        : `source folder ${target.root} does not exist: fix source.path`,
    );
  }
  const environment = profile.environment;
  const live = environment.mode !== "none" && environment.base_url !== undefined;
  if (!live) {
    missing.set(
      "live",
      environment.mode === "none"
        ? "no running app: set environment.mode (managed, external or compose) and environment.base_url"
        : "no running app: add environment.base_url",
    );
  }
  if (profile.api?.openapi === undefined) {
    missing.set(
      "openapi",
      "no OpenAPI document: add api.openapi (a file under the source root or a URL path)",
    );
  }
  if (profile.ui === undefined) missing.set("ui", "no user interface: add ui.entry (the entry page path)");
  else if (!live)
    missing.set("ui", "the UI needs a running app: set environment.mode and environment.base_url");
  if (profile.websocket === undefined) missing.set("websocket", "no WebSocket channels: add websocket.paths");
  if (profile.database === undefined)
    missing.set("database", "no database: add database (kind and path or url)");
  const usersWithCredentials = profile.users.filter(
    (user) => user.password !== undefined || user.token !== undefined,
  );
  if (usersWithCredentials.length < 2) {
    missing.set(
      "users",
      `needs two users with credentials for cross-user checks, found ${usersWithCredentials.length}: add users[] with password or token as secret_ref:NAME`,
    );
  }
  if (!hasSource || !isInsideGitRepository(target.root!)) {
    missing.set(
      "git",
      hasSource
        ? `${target.root} is not a git repository: run git init there`
        : "no git repository: add source.path to a git checkout",
    );
  }
  return missing;
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

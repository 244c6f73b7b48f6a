import picomatch from "picomatch/posix.js";
import type { ResolvedTargetPath } from "../paths.ts";
import { resolveTargetPath } from "../paths.ts";
import type { Denial, GuardScope } from "./scope.ts";
import { deny, quote } from "./scope.ts";

// write-scope: an agent writes only where its policy's write_paths (globs relative to the target root)
// allow, judged on where the bytes would really land. An agent without write_paths writes nothing.

export type ResolvedWrite = Extract<ResolvedTargetPath, { ok: true }>;

/** Resolves a path an agent wants to `verb` (write, commit); a path outside the target tree is denied. */
export function resolveWrite(candidate: string, verb: string, scope: GuardScope): ResolvedWrite | Denial {
  const { agent, target } = scope;
  if (target?.root === undefined) {
    return deny(
      "write-scope",
      `${agent.name} may not ${verb} ${quote(String(candidate))}: this target has no source root, so no file of it can be changed. Report the finding instead.`,
    );
  }
  const resolved = resolveTargetPath(target.root, candidate);
  if (!resolved.ok) {
    return deny(
      "write-scope",
      `${agent.name} may not ${verb} ${quote(String(candidate))}: ${resolved.problem}. Name a path relative to the target root, inside it, without following links out of it.`,
    );
  }
  return resolved;
}

const matchers = new Map<string, picomatch.Matcher>();

function writeMatcher(patterns: string[]): picomatch.Matcher {
  const key = patterns.join("\n");
  let matcher = matchers.get(key);
  if (matcher === undefined) {
    matcher = picomatch(patterns, { dot: true });
    matchers.set(key, matcher);
  }
  return matcher;
}

export function judgeWriteScope(
  resolved: ResolvedWrite,
  verb: string,
  scope: GuardScope,
): Denial | undefined {
  const { agent } = scope;
  const patterns = agent.policy.write_paths.filter((pattern) => pattern.trim() !== "");
  if (patterns.length === 0) {
    return deny(
      "write-scope",
      `${agent.name} may not ${verb} ${quote(resolved.requested)}: its policy declares no write_paths, so it writes no file. Report what you found instead.`,
    );
  }
  if (writeMatcher(patterns)(resolved.relative)) return undefined;
  const resolvesTo =
    resolved.relative === resolved.requested ? "" : ` (it resolves to ${quote(resolved.relative)})`;
  return deny(
    "write-scope",
    `${agent.name} may not ${verb} ${quote(resolved.requested)}${resolvesTo}: it may only write ${patterns.join(", ")} (relative to the target root). Write under one of those paths instead.`,
  );
}

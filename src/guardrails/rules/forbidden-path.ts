import picomatch from "picomatch/posix.js";
import type { Denial, GuardScope } from "./scope.ts";
import { deny, quote } from "./scope.ts";
import type { ResolvedWrite } from "./write-scope.ts";

// forbidden-path: some classes of path (migrations, auth, payment, secrets, infrastructure, ci — the
// system configuration says which globs) stop at a person however small the change, whatever an
// agent's write_paths allow. Both the path as asked and where it really lands are judged, without case.

export function judgeForbiddenPath(
  resolved: ResolvedWrite,
  verb: string,
  scope: GuardScope,
): Denial | undefined {
  for (const [pathClass, globs] of Object.entries(scope.system.forbidden_paths)) {
    for (const glob of globs) {
      if (glob.trim() === "") continue;
      const matches = picomatch(glob, { dot: true, nocase: true });
      if (matches(resolved.requested) || matches(resolved.relative)) {
        return deny(
          "forbidden-path",
          `${scope.agent.name} may not ${verb} ${quote(resolved.requested)}: it is in the ${pathClass} path class (${glob}), and that class stops at a person however small the change. Describe the change needed in your finding so a person can make it.`,
        );
      }
    }
  }
  return undefined;
}

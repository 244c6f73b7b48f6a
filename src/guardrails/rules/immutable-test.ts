import path from "node:path";
import { resolveTargetPath } from "../paths.ts";
import type { Denial, GuardScope } from "./scope.ts";
import { deny, quote } from "./scope.ts";
import type { ResolvedWrite } from "./write-scope.ts";

// immutable-test: an agent fixing a defect may not edit the failing test that proves it, or "fixing" the
// test would pass for a fix. Compared by real path, so another spelling or a link to it is refused too.

export function judgeImmutableTest(
  resolved: ResolvedWrite,
  verb: string,
  scope: GuardScope,
): Denial | undefined {
  const { agent, guard, target } = scope;
  const test = guard.immutableTest;
  if (!agent.policy.immutable_test || test === undefined || target?.root === undefined) return undefined;
  const protectedTest = resolveTargetPath(target.root, test);
  const same = protectedTest.ok
    ? protectedTest.absolute === resolved.absolute || protectedTest.relative === resolved.relative
    : resolved.requested === path.posix.normalize(test);
  if (!same) return undefined;
  return deny(
    "immutable-test",
    `${agent.name} may not ${verb} ${quote(resolved.requested)}: it is the failing test recorded on the finding being fixed, and it must stay as it is to prove the fix. Change the code under test instead.`,
  );
}

import path from "node:path";
import { physicalPath } from "../paths.ts";
import type { Denial, GuardScope } from "./scope.ts";
import { deny, quote } from "./scope.ts";

// golden-ledger: the answer key of a benchmark target is never readable nor writable by an agent, or the
// score would measure the key rather than the agent. Compared by real path, so a link to it is refused
// too, and any file named like a ledger is refused wherever it sits (a copy is as much the answer key).

const ANSWER_KEY_NAMES = ["defects.yaml", "defects.yml"];

/** Lower-case file names that are the answer key for this run. */
export function answerKeyNames(scope: GuardScope): string[] {
  const ledger = scope.target?.goldenLedger;
  return ledger === undefined ? ANSWER_KEY_NAMES : [...ANSWER_KEY_NAMES, path.basename(ledger).toLowerCase()];
}

export function judgeAnswerKey(candidate: string, verb: string, scope: GuardScope): Denial | undefined {
  const { agent, target } = scope;
  const refusal = deny(
    "golden-ledger",
    `${agent.name} may not ${verb} ${quote(String(candidate))}: it is the answer key of this target's benchmark, which no agent may read or write. Judge the target by its behaviour and its code instead.`,
  );
  if (typeof candidate !== "string") return refusal;
  const real = physicalPath(candidate, target?.root ?? process.cwd());
  // A path that cannot be resolved (a loop of links) cannot be shown not to be the answer key.
  if (real === undefined) return refusal;
  const names = [path.basename(candidate), path.basename(real)].map((name) => name.toLowerCase());
  if (names.some((name) => ANSWER_KEY_NAMES.includes(name))) return refusal;
  const ledger = target?.goldenLedger === undefined ? undefined : physicalPath(target.goldenLedger, "/");
  if (ledger !== undefined && ledger.toLowerCase() === real.toLowerCase()) return refusal;
  return undefined;
}

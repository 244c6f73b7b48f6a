import { judgeShellCommand } from "../commands.ts";
import { answerKeyNames } from "./golden-ledger.ts";
import type { Denial, GuardScope } from "./scope.ts";
import { deny, quote } from "./scope.ts";

// forbidden-command: a shell command is judged by the programs it would run (commands.ts), against the
// built-in refusals and the system's `forbidden_commands`.

export function judgeShell(command: string, scope: GuardScope): Denial | undefined {
  const { agent, system } = scope;
  if (typeof command !== "string") {
    return deny(
      "forbidden-command",
      `${agent.name} may not run a shell command that is not text. Give the command as a string.`,
    );
  }
  const verdict = judgeShellCommand(command, {
    configured: system.forbidden_commands,
    answerKeyNames: answerKeyNames(scope),
  });
  if (verdict === undefined) return undefined;
  return deny(verdict.rule, `${agent.name} may not run the shell command ${quote(command)}: ${verdict.why}.`);
}

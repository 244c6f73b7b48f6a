import { stringify } from "yaml";

/** The task as a reader (a person or a model) sees it: a short heading and the data as YAML. */
export function renderTask(task: Record<string, unknown>): string {
  const { agent, mode, run_id, invocation, ...rest } = task;
  return [
    `# Task for ${String(agent)}`,
    "",
    `Run ${String(run_id)} (mode ${String(mode)}), invocation ${String(invocation)}.`,
    "Work only through your tools. Everything you need to know about the target is below; read the system map with get_system_map.",
    "",
    "```yaml",
    stringify(rest, { lineWidth: 0 }).trimEnd(),
    "```",
  ].join("\n");
}

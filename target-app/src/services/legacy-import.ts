import type { ServiceContext, SessionUser } from "./context.ts";
import { badRequest } from "./errors.ts";
import { createTask, type Task } from "./tasks.ts";
import { TASK_STATUSES } from "./validation.ts";

/** Column names used by the CSV export of the tracker we migrated from. */
const LEGACY_COLUMNS = ["Summary", "Details", "State", "Priority", "Estimate"] as const;

const LEGACY_STATES: Record<string, string> = {
  Open: "todo",
  "In Progress": "in_progress",
  Resolved: "done",
  Closed: "done",
};

export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = "";
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') {
        quoted = false;
      } else {
        field += char;
      }
    } else if (char === '"') {
      quoted = true;
    } else if (char === ",") {
      record.push(field);
      field = "";
    } else if (char === "\n" || char === "\r") {
      if (char === "\r" && text[i + 1] === "\n") i++;
      record.push(field);
      records.push(record);
      record = [];
      field = "";
    } else {
      field += char;
    }
  }
  if (field !== "" || record.length > 0) {
    record.push(field);
    records.push(record);
  }
  return records;
}

export async function importLegacyTasks(
  ctx: ServiceContext,
  user: SessionUser,
  projectId: number,
  csv: string,
): Promise<Task[]> {
  const [header, ...records] = parseCsv(csv);
  if (!header) throw badRequest("The file is empty");
  const index = Object.fromEntries(LEGACY_COLUMNS.map((column) => [column, header.indexOf(column)]));
  if (index.Summary === -1) throw badRequest("The file has no Summary column");
  const created: Task[] = [];
  for (const record of records) {
    const cell = (column: (typeof LEGACY_COLUMNS)[number]) => {
      const position = index[column] ?? -1;
      return position >= 0 ? (record[position] ?? "").trim() : "";
    };
    const title = cell("Summary");
    if (!title) continue;
    const status = LEGACY_STATES[cell("State")] ?? "todo";
    const estimate = Number.parseFloat(cell("Estimate"));
    created.push(
      await createTask(ctx, user, projectId, {
        title: title.slice(0, 200),
        description: cell("Details").slice(0, 5000),
        status: (TASK_STATUSES as readonly string[]).includes(status) ? status : "todo",
        priority: cell("Priority").toLowerCase() || undefined,
        estimate_hours: Number.isFinite(estimate) ? estimate : null,
      }),
    );
  }
  return created;
}

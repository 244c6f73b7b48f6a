// Plain aligned columns for terminal output: no colours, no box drawing, so output pastes cleanly into
// tickets and reads the same in a CI log.

export interface Column<Row> {
  header: string;
  value: (row: Row) => string;
  align?: "left" | "right";
}

export function renderTable<Row>(columns: ReadonlyArray<Column<Row>>, rows: readonly Row[]): string {
  const cells = rows.map((row) => columns.map((column) => oneLine(column.value(row))));
  const widths = columns.map((column, index) =>
    Math.max(column.header.length, ...cells.map((row) => (row[index] ?? "").length)),
  );
  const format = (values: readonly string[]): string =>
    values
      .map((value, index) => {
        const width = widths[index] ?? 0;
        return columns[index]?.align === "right" ? value.padStart(width) : value.padEnd(width);
      })
      .join("  ")
      .trimEnd();
  return [format(columns.map((column) => column.header)), ...cells.map(format)].join("\n");
}

/** `$0.0123`: below a dollar, four decimals, so cheap model runs can still be told apart. */
export function formatCost(usd: number): string {
  return `$${usd.toFixed(usd !== 0 && Math.abs(usd) < 1 ? 4 : 2)}`;
}

/** `2026-11-29 20:45:01` (UTC) from an ISO timestamp; unparseable input is shown as it is. */
export function formatTimestamp(iso: string): string {
  const time = Date.parse(iso);
  return Number.isNaN(time) ? iso : new Date(time).toISOString().slice(0, 19).replace("T", " ");
}

/** `20:45:01.123` (UTC), for timelines within one run. */
export function formatClock(iso: string): string {
  const time = Date.parse(iso);
  return Number.isNaN(time) ? iso : new Date(time).toISOString().slice(11, 23);
}

export function oneLine(text: string, limit = 120): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > limit ? `${flat.slice(0, limit - 1)}…` : flat;
}

import fs from "node:fs";
import path from "node:path";
import { QaasError } from "../errors.ts";
import { type SystemMap, SystemMapSchema } from "./system-map.ts";

// What `qaas map` prints: the latest saved system map of a target, reduced to what a person checks first
// (is the API documented, which frameworks were seen, what could be reached).

export interface SavedSystemMap {
  version: number;
  file: string;
  map: SystemMap;
}

export interface MapSummary {
  target: string;
  version: number;
  file: string;
  created_at: string;
  commit: string | null;
  base_url: string | null;
  openapi: { source: string; version: string; title?: string } | null;
  operations: {
    total: number;
    documented: number;
    undocumented: number;
    by_security: Record<string, number>;
    undocumented_examples: string[];
  };
  routes: { total: number; by_framework: Record<string, number> };
  pages: { total: number; broken: string[] };
  channels: string[];
  tables: { total: number; names: string[]; kind: string | null };
  owners: { entries: number; owners: string[]; sources: string[] };
  notes: string[];
}

const TARGET_NAME = /^[a-z0-9][a-z0-9_-]*$/;
const EXAMPLES = 10;

/** `<home>/system-map/<target>/v<N>.json` with the highest N, or undefined when none was saved. */
export function latestSystemMapFile(
  home: string,
  target: string,
): { version: number; file: string } | undefined {
  if (!TARGET_NAME.test(target)) {
    throw new QaasError(
      "TARGET_NAME_INVALID",
      `target name ${JSON.stringify(target)} is invalid: lower-case letters, digits, - and _`,
    );
  }
  const folder = path.join(home, "system-map", target);
  let names: string[];
  try {
    names = fs.readdirSync(folder);
  } catch {
    return undefined;
  }
  const versions = names
    .map((name) => /^v(\d+)\.json$/.exec(name)?.[1])
    .filter((digits): digits is string => digits !== undefined)
    .map(Number)
    .sort((left, right) => right - left);
  const version = versions[0];
  return version === undefined ? undefined : { version, file: path.join(folder, `v${version}.json`) };
}

export function loadLatestSystemMap(home: string, target: string): SavedSystemMap | undefined {
  const latest = latestSystemMapFile(home, target);
  if (!latest) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(latest.file, "utf8"));
  } catch (error) {
    throw new QaasError(
      "MAP_UNREADABLE",
      `cannot read system map ${latest.file}: ${(error as Error).message}`,
    );
  }
  const parsed = SystemMapSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new QaasError(
      "MAP_INVALID",
      `system map ${latest.file} is invalid at ${issue?.path.join(".") || "(root)"}: ${issue?.message}; run MAPPER again`,
    );
  }
  return { ...latest, map: parsed.data };
}

export function summarizeSystemMap(saved: SavedSystemMap): MapSummary {
  const { map } = saved;
  const undocumented = map.operations.filter((operation) => !operation.documented);
  return {
    target: map.target,
    version: saved.version,
    file: saved.file,
    created_at: map.created_at,
    commit: map.commit,
    base_url: map.base_url,
    openapi: map.openapi
      ? {
          source: map.openapi.source,
          version: map.openapi.version,
          ...(map.openapi.title ? { title: map.openapi.title } : {}),
        }
      : null,
    operations: {
      total: map.operations.length,
      documented: map.operations.length - undocumented.length,
      undocumented: undocumented.length,
      by_security: countBy(map.operations.map((operation) => operation.security)),
      undocumented_examples: undocumented
        .slice(0, EXAMPLES)
        .map((operation) => `${operation.method} ${operation.path}`),
    },
    routes: { total: map.routes.length, by_framework: countBy(map.routes.map((route) => route.framework)) },
    pages: {
      total: map.pages.length,
      broken: map.pages
        .filter((page) => page.status === undefined || page.status >= 400)
        .map((page) => page.path),
    },
    channels: map.channels.map((channel) => channel.path),
    tables: {
      total: map.database?.tables.length ?? 0,
      names: map.database?.tables.map((table) => table.name) ?? [],
      kind: map.database?.kind ?? null,
    },
    owners: {
      entries: map.ownership.length,
      owners: [...new Set(map.ownership.map((entry) => entry.owner))],
      sources: [...new Set(map.ownership.map((entry) => entry.source))],
    },
    notes: map.notes,
  };
}

export function formatMapSummary(summary: MapSummary): string {
  const lines: string[] = [];
  const row = (label: string, value: string): void => {
    lines.push(`  ${label.padEnd(12)}${value}`);
  };
  const commit = summary.commit ? `, commit ${summary.commit.slice(0, 10)}` : "";
  lines.push(`System map of ${summary.target}: v${summary.version} (${summary.created_at}${commit})`);
  row("base URL", summary.base_url ?? "none (static target)");
  row(
    "OpenAPI",
    summary.openapi
      ? `${summary.openapi.source} (${summary.openapi.version}${summary.openapi.title ? `, "${summary.openapi.title}"` : ""})`
      : "none",
  );
  const operations = summary.operations;
  row(
    "operations",
    `${operations.total}: ${operations.documented} documented, ${operations.undocumented} undocumented (${pairs(operations.by_security)})`,
  );
  if (operations.undocumented_examples.length > 0)
    row("", `undocumented: ${operations.undocumented_examples.join(", ")}`);
  row(
    "routes",
    summary.routes.total > 0
      ? `${summary.routes.total} in source: ${pairs(summary.routes.by_framework)}`
      : "none found in source",
  );
  row(
    "pages",
    `${summary.pages.total}${summary.pages.broken.length > 0 ? `, broken: ${list(summary.pages.broken)}` : ""}`,
  );
  row(
    "channels",
    summary.channels.length > 0 ? `${summary.channels.length}: ${list(summary.channels)}` : "none",
  );
  row(
    "tables",
    summary.tables.total > 0
      ? `${summary.tables.total} (${summary.tables.kind}): ${list(summary.tables.names)}`
      : "none",
  );
  row(
    "owners",
    summary.owners.entries > 0
      ? `${summary.owners.entries} entries from ${summary.owners.sources.join(", ")}: ${list(summary.owners.owners)}`
      : "none",
  );
  for (const [index, note] of summary.notes.entries()) row(index === 0 ? "notes" : "", note);
  return `${lines.join("\n")}\n`;
}

export function missingMapMessage(target: string): string {
  return (
    `no system map for target ${target} yet: run \`qaas run --mode nightly --target ${target}\` ` +
    `(or MAPPER alone: \`qaas run --target ${target} --agent MAPPER\`)`
  );
}

function countBy(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

function pairs(counts: Record<string, number>): string {
  const entries = Object.entries(counts).sort(([, left], [, right]) => right - left);
  return entries.length > 0 ? entries.map(([name, count]) => `${name} ${count}`).join(", ") : "none";
}

function list(values: string[]): string {
  return values.length > EXAMPLES
    ? `${values.slice(0, EXAMPLES).join(", ")}, … (${values.length - EXAMPLES} more)`
    : values.join(", ");
}

import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { QaasError } from "../../errors.ts";
import type { AdvisorySnapshot } from "./advisory-snapshot.ts";
import type { OsvAdvisory } from "./osv-match.ts";

export interface RefreshOptions {
  /** Folders of OSV `*.json` files or OSV `all.zip` archives. */
  sources: string[];
  ecosystems?: string[];
  /** Keep only these packages (all when absent). */
  packages?: string[];
  date?: string;
}

/** Entries of a zip archive (stored or deflated, no ZIP64): enough for OSV's per-ecosystem `all.zip`. */
export function readZipEntries(file: string): Array<{ name: string; content: Buffer }> {
  const data = fs.readFileSync(file);
  let end = -1;
  for (let offset = data.length - 22; offset >= Math.max(0, data.length - 65_557); offset -= 1) {
    if (data.readUInt32LE(offset) === 0x06054b50) {
      end = offset;
      break;
    }
  }
  if (end < 0)
    throw new QaasError("ZIP_INVALID", `${file} is not a zip archive (no end-of-central-directory record)`);
  const count = data.readUInt16LE(end + 10);
  let pointer = data.readUInt32LE(end + 16);
  if (count === 0xffff || pointer === 0xffffffff) {
    throw new QaasError(
      "ZIP64_UNSUPPORTED",
      `${file} is a ZIP64 archive; unzip it and pass the folder to --from instead`,
    );
  }
  const entries: Array<{ name: string; content: Buffer }> = [];
  for (let index = 0; index < count; index += 1) {
    if (data.readUInt32LE(pointer) !== 0x02014b50)
      throw new QaasError("ZIP_INVALID", `${file}: corrupt central directory at entry ${index}`);
    const method = data.readUInt16LE(pointer + 10);
    const compressedSize = data.readUInt32LE(pointer + 20);
    const nameLength = data.readUInt16LE(pointer + 28);
    const extraLength = data.readUInt16LE(pointer + 30);
    const commentLength = data.readUInt16LE(pointer + 32);
    const localOffset = data.readUInt32LE(pointer + 42);
    const name = data.subarray(pointer + 46, pointer + 46 + nameLength).toString("utf8");
    pointer += 46 + nameLength + extraLength + commentLength;
    if (name.endsWith("/")) continue;
    const localNameLength = data.readUInt16LE(localOffset + 26);
    const localExtraLength = data.readUInt16LE(localOffset + 28);
    const start = localOffset + 30 + localNameLength + localExtraLength;
    const raw = data.subarray(start, start + compressedSize);
    if (method === 0) entries.push({ name, content: Buffer.from(raw) });
    else if (method === 8) entries.push({ name, content: zlib.inflateRawSync(raw) });
    else
      throw new QaasError(
        "ZIP_METHOD_UNSUPPORTED",
        `${file}: entry ${name} uses compression method ${method}; unzip it and pass the folder`,
      );
  }
  return entries;
}

function jsonFilesIn(folder: string): string[] {
  const files: string[] = [];
  for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) files.push(...jsonFilesIn(full));
    else if (entry.name.endsWith(".json")) files.push(full);
  }
  return files;
}

function* readSources(sources: readonly string[]): Generator<{ where: string; text: string }> {
  for (const source of sources) {
    if (!fs.existsSync(source)) throw new QaasError("OSV_SOURCE_MISSING", `--from ${source} does not exist`);
    if (fs.statSync(source).isDirectory()) {
      for (const file of jsonFilesIn(source)) yield { where: file, text: fs.readFileSync(file, "utf8") };
    } else if (source.endsWith(".zip")) {
      for (const entry of readZipEntries(source))
        if (entry.name.endsWith(".json"))
          yield { where: `${source}:${entry.name}`, text: entry.content.toString("utf8") };
    } else {
      yield { where: source, text: fs.readFileSync(source, "utf8") };
    }
  }
}

/** The fields the matcher needs, for the wanted ecosystems; withdrawn advisories are left out. */
function slim(
  record: Record<string, unknown>,
  ecosystems: Set<string>,
  packages: Set<string> | undefined,
): OsvAdvisory | undefined {
  if (typeof record.id !== "string" || !Array.isArray(record.affected) || record.withdrawn) return undefined;
  const affected = (record.affected as OsvAdvisory["affected"])
    .filter((entry) => entry?.package && ecosystems.has(entry.package.ecosystem.toLowerCase()))
    .filter((entry) => !packages || packages.has(entry.package.name.toLowerCase()))
    .map((entry) => {
      const ranges = (entry.ranges ?? []).filter((range) => range.type !== "GIT");
      return {
        package: { ecosystem: entry.package.ecosystem, name: entry.package.name },
        ...(ranges.length > 0 ? { ranges } : { versions: entry.versions ?? [] }),
      };
    });
  if (affected.length === 0) return undefined;
  const severity = (record.database_specific as { severity?: unknown } | undefined)?.severity;
  return {
    id: record.id,
    aliases: Array.isArray(record.aliases) ? (record.aliases as string[]) : [],
    summary: typeof record.summary === "string" ? record.summary : undefined,
    modified: typeof record.modified === "string" ? record.modified : undefined,
    affected,
    references: [
      {
        type: "ADVISORY",
        url: record.id.startsWith("GHSA-")
          ? `https://github.com/advisories/${record.id}`
          : `https://osv.dev/vulnerability/${record.id}`,
      },
    ],
    database_specific: typeof severity === "string" ? { severity } : {},
  };
}

/** Builds a snapshot from OSV-format files (a folder of `*.json` or OSV's `all.zip`). */
export function buildSnapshot(options: RefreshOptions): {
  snapshot: AdvisorySnapshot;
  read: number;
  skipped: number;
} {
  const ecosystems = new Set(
    (options.ecosystems ?? ["npm", "PyPI"]).map((ecosystem) => ecosystem.toLowerCase()),
  );
  const packages = options.packages?.length
    ? new Set(options.packages.map((name) => name.toLowerCase()))
    : undefined;
  const byId = new Map<string, OsvAdvisory>();
  let read = 0;
  let skipped = 0;
  for (const { text } of readSources(options.sources)) {
    read += 1;
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(text) as Record<string, unknown>;
    } catch {
      skipped += 1;
      continue;
    }
    const advisory = slim(record, ecosystems, packages);
    if (!advisory) {
      skipped += 1;
      continue;
    }
    const known = byId.get(advisory.id);
    if (!known || (advisory.modified ?? "") > (known.modified ?? "")) byId.set(advisory.id, advisory);
  }
  const advisories = [...byId.values()].sort((a, b) => a.id.localeCompare(b.id));
  return {
    snapshot: {
      snapshot_version: 1,
      snapshot_date: options.date ?? new Date().toISOString().slice(0, 10),
      source: `OSV records from ${options.sources.map((source) => path.basename(source)).join(", ")}`,
      advisories,
    },
    read,
    skipped,
  };
}

import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { QaasError } from "../../../errors.ts";
import type { SnapshotAdvisory } from "../advisory-snapshot.ts";
import { advisoriesFromOsvRecord, count, mergeSkipped, type RecordFilter } from "./osv-record.ts";
import type { SourceReading } from "./types.ts";

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
  return files.sort();
}

/** Each JSON document of an input: the files of a folder (recursively), the entries of a zip, or one file. */
function documentsOf(input: string): Array<{ name: string; content: Buffer }> {
  if (!fs.existsSync(input)) throw new QaasError("OSV_SOURCE_MISSING", `--osv ${input} does not exist`);
  if (fs.statSync(input).isDirectory())
    return jsonFilesIn(input).map((file) => ({
      name: path.relative(input, file).split(path.sep).join("/"),
      content: fs.readFileSync(file),
    }));
  if (input.endsWith(".zip"))
    return readZipEntries(input)
      .filter((entry) => entry.name.endsWith(".json"))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return [{ name: path.basename(input), content: fs.readFileSync(input) }];
}

/** Describes a hand-kept file of OSV records: `{ name, repository?, licence, records: [...] }`. */
interface RecordCollection {
  name?: unknown;
  repository?: unknown;
  licence?: unknown;
  records?: unknown;
}

/**
 * OSV-format records from an OSV export (a folder of `*.json`, or a per-ecosystem `all.zip`) or from one
 * JSON file holding a record, an array of records, or a described collection (`{ name, licence, records }`).
 */
export function readOsvFiles(input: string, filter: RecordFilter = {}): SourceReading {
  const skipped: Record<string, number> = {};
  const advisories: SnapshotAdvisory[] = [];
  const documents = documentsOf(input);
  let name = `osv:${path.basename(input)}`;
  let licence = "as published by the database each record comes from (see data/advisories/README.md)";
  let repository: string | undefined;
  const hash = crypto.createHash("sha256");
  for (const document of documents) {
    hash.update(document.name).update("\0").update(document.content);
    let parsed: unknown;
    try {
      parsed = JSON.parse(document.content.toString("utf8"));
    } catch {
      count(skipped, "unreadable_file");
      continue;
    }
    let records: unknown[] = Array.isArray(parsed) ? parsed : [parsed];
    const collection = parsed as RecordCollection;
    if (documents.length === 1 && !Array.isArray(parsed) && Array.isArray(collection?.records)) {
      records = collection.records as unknown[];
      if (typeof collection.name === "string") name = collection.name;
      if (typeof collection.licence === "string") licence = collection.licence;
      if (typeof collection.repository === "string") repository = collection.repository;
    }
    for (const record of records) {
      const reading = advisoriesFromOsvRecord(record as Record<string, unknown>, name, filter);
      advisories.push(...reading.advisories);
      mergeSkipped(skipped, reading.skipped);
    }
  }
  for (const advisory of advisories) advisory.source = name;
  return {
    source: { name, ...(repository ? { repository } : {}), licence, digest: hash.digest("hex"), skipped },
    advisories,
  };
}

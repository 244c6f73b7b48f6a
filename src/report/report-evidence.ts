import fs from "node:fs";
import path from "node:path";
import type { DefectEnvelope } from "../envelope/envelope.ts";
import type { RunStore } from "../store/run-store.ts";

// A finding's evidence as a reader sees it: the artifact's text (an HTTP exchange written as request and
// response, a generated test, a log) or its picture, bounded so one huge artifact cannot swell a report.
// Artifacts resolve through the store, which refuses a URI that leads outside the run store.

export interface ReportEvidence {
  kind: string;
  description: string;
  uri: string | null;
  /** Text content, cut at TEXT_LIMIT characters. */
  text: string | null;
  truncated: boolean;
  /** An image artifact as a data: URI (no file or network reference survives in the report). */
  image: string | null;
  test: { path: string; command: string } | null;
  /** Why the artifact could not be shown, when it could not. */
  problem: string | null;
}

const TEXT_LIMIT = 8000;
const IMAGE_LIMIT_BYTES = 1_500_000;
const IMAGE_TYPES: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
};

export function readEvidence(store: RunStore, envelope: DefectEnvelope): ReportEvidence[] {
  return envelope.evidence.map((item) => {
    const evidence: ReportEvidence = {
      kind: item.kind,
      description: item.description,
      uri: item.uri ?? null,
      text: null,
      truncated: false,
      image: null,
      test: item.test ? { path: item.test.path, command: item.test.command } : null,
      problem: null,
    };
    if (item.uri === undefined) return evidence;
    let file: string;
    try {
      file = store.resolveArtifact(item.uri);
    } catch (error) {
      return { ...evidence, problem: error instanceof Error ? error.message : String(error) };
    }
    const mime = IMAGE_TYPES[path.extname(file).toLowerCase()];
    if (mime !== undefined) {
      const size = fs.statSync(file).size;
      if (size > IMAGE_LIMIT_BYTES)
        return { ...evidence, problem: `image of ${size} bytes left out (limit ${IMAGE_LIMIT_BYTES})` };
      return { ...evidence, image: `data:${mime};base64,${fs.readFileSync(file).toString("base64")}` };
    }
    const raw = readHead(file, TEXT_LIMIT * 4);
    const text = exchangeText(raw) ?? raw;
    return {
      ...evidence,
      text: text.length > TEXT_LIMIT ? text.slice(0, TEXT_LIMIT) : text,
      truncated: text.length > TEXT_LIMIT || fs.statSync(file).size > TEXT_LIMIT * 4,
    };
  });
}

function readHead(file: string, bytes: number): string {
  const descriptor = fs.openSync(file, "r");
  try {
    const buffer = Buffer.alloc(bytes);
    const read = fs.readSync(descriptor, buffer, 0, bytes, 0);
    return buffer.subarray(0, read).toString("utf8");
  } finally {
    fs.closeSync(descriptor);
  }
}

interface ExchangeArtifact {
  request?: { method?: string; url?: string; headers?: Record<string, string>; body?: unknown };
  response?: { status?: number; headers?: Record<string, string>; body?: unknown };
  error?: string;
}

/** An exchange artifact (the JSON the HTTP tools write) as the request and response a person reads. */
function exchangeText(raw: string): string | undefined {
  let value: ExchangeArtifact;
  try {
    value = JSON.parse(raw) as ExchangeArtifact;
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== "object" || typeof value.request?.method !== "string")
    return undefined;
  const lines = [`${value.request.method} ${value.request.url ?? ""}`, ...headerLines(value.request.headers)];
  if (value.request.body !== undefined) lines.push("", bodyText(value.request.body));
  lines.push("");
  if (value.response) {
    lines.push(`HTTP ${value.response.status ?? "?"}`, ...headerLines(value.response.headers));
    if (value.response.body !== undefined) lines.push("", bodyText(value.response.body));
  } else lines.push(`no response${value.error ? `: ${value.error}` : ""}`);
  return lines.join("\n");
}

function headerLines(headers: Record<string, string> | undefined): string[] {
  return Object.entries(headers ?? {}).map(([name, value]) => `${name}: ${value}`);
}

function bodyText(body: unknown): string {
  return typeof body === "string" ? body : JSON.stringify(body, null, 2);
}

import path from "node:path";
import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { operationKey } from "../api/operation-index.ts";
import type { InputPoint } from "../auditor/input-points.ts";
import { graphqlEffect } from "../graphql/graphql-effect.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { anchorNames, climbFrom } from "./anchored-traversal.ts";
import { answerShowsAll } from "./answer-text.ts";
import { type PointFinding, pointFinding, where } from "./injection-finding.ts";
import type { KnownFile } from "./known-files.ts";
import { knownFiles, plainTextFiles } from "./known-files.ts";
import { uniqueToken } from "./markers.ts";
import type { OpenPoint, Sent } from "./point-sender.ts";
import { sendAt } from "./point-sender.ts";
import type { PointProbeOptions } from "./probe-frame.ts";
import { probePoints } from "./probe-frame.ts";
import { pointWords } from "./probe-points.ts";

// Path traversal, read-only (sent only to operations that read) and aimed only at files the application ships (its own sources, the assets it
// serves). A file-naming input gets `../` sequences toward one of them — plain, `....//` (survives a
// one-pass strip), `..%2f` and `%252e%252e%252f` (decoded again by the application), `..\` (Windows), the
// absolute path, and a climb to `/` followed by the absolute path, which works whatever the folder's
// depth. Reported when the answer carries the file's own lines; confirmed by sending it again, by the same
// path to a file that does not exist (must not show them) and by the file's name without traversal (must
// not show them either: then the folder simply contains it). Where a check wants a prefix, the climb starts
// from a name that brought back a document the application ships (anchored-traversal.ts).

const STRONG_NAME =
  /^(file|files|filename|file_?name|filepath|file_?path|path|pathname|doc|document|attachment|template|tpl|include|inc|dir|directory|folder|resource|download|asset)$/i;
const WEAK_NAME =
  /^(name|id|key|page|view|src|source|lang|locale|img|image|report|log|item|object|theme|style|layout)$/i;
const FILE_WORDS =
  /file|download|document|\bdocs?\b|attachment|static|asset|export|report|template|image|media|upload|read|view|\blogs?\b|backup|resource|content|page/;

const READ_WORDS = /\b(download|read|view|preview|export|show|open|fetch|load|get|render|print)\b/;
const WRITE_WORDS =
  /\b(upload|save|write|create|import|put|update|edit|store|set|add|new|replace|rename|move|copy|delete|remove)\b/;

/**
 * Whether the operation only reads: a file name sent to one that writes may be where it writes, and a
 * traversal aimed at a file the application ships would overwrite that file (an upload's `filename` of
 * `../app.py`). Reads are GET and HEAD, GraphQL queries, and other requests named only for reading.
 */
function onlyReads(point: InputPoint): boolean {
  const operation = point.operation;
  if (operation.graphql) return graphqlEffect(operation.graphql) === "read";
  const method = operation.method.toUpperCase();
  if (method === "GET" || method === "HEAD") return true;
  const words = pointWords(point).operation;
  return method === "POST" && READ_WORDS.test(words) && !WRITE_WORDS.test(words);
}

/** A value that names a file (`include.php`, `docs/terms.md`): whatever the input is called, it takes one. */
const FILE_VALUE =
  /^[\w./-]*\w\.(php\d?|phtml|inc|html?|txt|md|json|xml|ya?ml|ini|conf|cfg|log|pdf|csv|jsp|aspx?|tpl|twig|ejs|hbs|mustache|js|css|png|jpe?g|gif|svg)$/i;

/** The example the map holds for the point's parameter (a crawled link's value, a document's example). */
function exampleOf(point: InputPoint): unknown {
  if (point.in !== "query" && point.in !== "path") return undefined;
  return point.operation.parameters.find(
    (parameter) => parameter.in === point.in && parameter.name === point.name,
  )?.example;
}

function select(point: InputPoint): boolean {
  if (point.numeric || !onlyReads(point)) return false;
  const example = exampleOf(point);
  if (typeof example === "string" && FILE_VALUE.test(example)) return true;
  const words = pointWords(point);
  const name = words.name.replace(/([a-z])([A-Z])/g, "$1_$2");
  if (STRONG_NAME.test(name) || /(^|_)(file|path|dir|folder|template)(_|$)/i.test(name)) return true;
  return WEAK_NAME.test(name) && FILE_WORDS.test(words.operation);
}

interface Climb {
  name: string;
  up: string;
}

const CLIMBS: readonly Climb[] = [
  { name: "../", up: "../" },
  { name: "....// (strip-once bypass)", up: "....//" },
  { name: "..%2f (decoded by the application)", up: "..%2f" },
  { name: "%252e%252e%252f (double-encoded)", up: "%252e%252e%252f" },
  { name: "..\\ (Windows separator)", up: "..\\" },
];

/** The traversals to try for one file, cheapest and most general first. */
function traversals(
  file: KnownFile,
): Array<{ name: string; value: (target: string) => string; target: string }> {
  const list: Array<{ name: string; value: (target: string) => string; target: string }> = [];
  if (file.absolute) {
    const rooted = file.absolute.replace(/^\/+/, "");
    for (const climb of CLIMBS.slice(0, 4))
      list.push({
        name: `${climb.name} to / then the absolute path`,
        value: (target) => climb.up.repeat(12) + target,
        target: rooted,
      });
    list.push({ name: "absolute path", value: (target) => `/${target}`, target: rooted });
  }
  for (const climb of CLIMBS)
    for (let depth = 1; depth <= 4; depth += 1)
      list.push({
        name: `${climb.name} ×${depth}`,
        value: (target) => climb.up.repeat(depth) + target,
        target: file.relative,
      });
  return list;
}

interface Hit {
  open: OpenPoint;
  file: KnownFile;
  technique: string;
  evidence: Array<{ label: string; sent: Sent }>;
}

export async function probePathTraversal(
  run: ProbeRun,
  options: PointProbeOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const files = await knownFiles(run);
  if (files.length === 0) {
    return {
      candidates: [],
      stats: {
        files: 0,
        note: "no file of the application to aim at: the profile has no source path and no page serves a script or style",
      },
    };
  }
  const { hits, stats } = await probePoints(run, options, {
    select,
    test: (open) => testPoint(run, open, files),
    acceptServerError: true,
  });
  const candidates = hits.map((hit) => pointFinding(run, findingOf(hit)));
  return {
    candidates,
    stats: {
      ...stats,
      files: files.map((file) => `${file.from}:${file.relative}`),
      confirmed: candidates.length,
    },
  };
}

async function testPoint(
  run: ProbeRun,
  open: OpenPoint,
  files: readonly KnownFile[],
): Promise<Hit | undefined> {
  for (const [index, file] of files.entries()) {
    if (answerShowsAll(open.exchange, file.excerpts)) continue;
    // A second file of the same tree only needs the depth-independent forms: the first tried every depth.
    const list = traversals(file);
    for (const traversal of index > 0 && file.absolute ? list.slice(0, 5) : list) {
      const value = traversal.value(traversal.target);
      const sent = await sendAt(run, open, value);
      if (!sent || !answerShowsAll(sent.exchange, file.excerpts)) continue;
      const confirmed = await confirm(run, open, file, traversal, sent);
      if (confirmed) return confirmed;
    }
  }
  return anchored(run, open, files);
}

/** Documents in folders of the tree, to learn which prefix the point wants (anchored-traversal.ts). */
const ANCHOR_DOCUMENTS = 4;

async function anchored(
  run: ProbeRun,
  open: OpenPoint,
  files: readonly KnownFile[],
): Promise<Hit | undefined> {
  const documents = plainTextFiles(run, ANCHOR_DOCUMENTS).filter(
    (document) =>
      document.relative.includes("/") && !files.some((file) => file.relative === document.relative),
  );
  for (const document of documents.slice(0, 2)) {
    if (answerShowsAll(open.exchange, document.excerpts)) continue;
    for (const anchor of anchorNames(document)) {
      const accepted = await sendAt(run, open, anchor);
      if (!accepted || !answerShowsAll(accepted.exchange, document.excerpts)) continue;
      for (const file of files) {
        for (const up of ["../", "....//"]) {
          const value = climbFrom(anchor, document, file, up);
          if (!value) continue;
          const sent = await sendAt(run, open, value);
          if (!sent || !answerShowsAll(sent.exchange, file.excerpts)) continue;
          const prefix = value.slice(0, value.length - file.relative.length);
          const traversal = {
            name: `${up} after the accepted folder ${path.posix.dirname(anchor)}/`,
            value: (target: string) => `${prefix}${target}`,
            target: file.relative,
          };
          const confirmed = await confirm(run, open, file, traversal, sent);
          if (confirmed) return confirmed;
        }
      }
      break;
    }
  }
  return undefined;
}

async function confirm(
  run: ProbeRun,
  open: OpenPoint,
  file: KnownFile,
  traversal: { name: string; value: (target: string) => string; target: string },
  sent: Sent,
): Promise<Hit | undefined> {
  const again = await sendAt(run, open, traversal.value(traversal.target));
  if (!again || !answerShowsAll(again.exchange, file.excerpts)) return undefined;
  const missingTarget = path.posix.join(path.posix.dirname(traversal.target), `${uniqueToken()}-missing.txt`);
  const missing = await sendAt(run, open, traversal.value(missingTarget));
  if (!missing || answerShowsAll(missing.exchange, file.excerpts)) return undefined;
  for (const direct of new Set([file.relative, path.posix.basename(file.relative)])) {
    const plain = await sendAt(run, open, direct);
    if (!plain || answerShowsAll(plain.exchange, file.excerpts)) return undefined;
  }
  return {
    open,
    file,
    technique: traversal.name,
    evidence: [
      { label: "traversal", sent },
      { label: "traversal-again", sent: again },
      { label: "missing-file", sent: missing },
    ],
  };
}

function findingOf(hit: Hit): PointFinding {
  const key = operationKey(hit.open.point.operation);
  return {
    open: hit.open,
    defectClass: "injection",
    family: "path-traversal",
    title: `Path traversal in ${where(hit.open)} of ${key} (${hit.technique})`,
    summary: `${key}: ${where(hit.open)} set to a ${hit.technique} path reaching ${hit.file.relative}, a file the application ships, answered with that file's content (twice), while the same path to a missing file and the file's plain name did not: the input names files outside the folder it should stay in.`,
    impact:
      "An attacker reads any file the server's account can read: source code, configuration, keys and credentials.",
    evidence: hit.evidence,
    assertions: [
      {
        kind: "answer_lacks",
        step: "traversal",
        text: hit.file.excerpts[0],
        message: `a file name must stay inside its folder (${hit.file.relative} was read through ../)`,
      },
    ],
    notes: [
      `file read: ${hit.file.relative} (${hit.file.from === "source" ? "from the source tree" : "an asset the application serves"})`,
    ],
  };
}

import fs from "node:fs";
import path from "node:path";
import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { operationKey } from "../api/operation-index.ts";
import type { InputPoint } from "../auditor/input-points.ts";
import { graphqlEffect } from "../graphql/graphql-effect.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { pointFinding, where } from "./injection-finding.ts";
import { uniqueToken } from "./markers.ts";
import type { OpenPoint, Sent } from "./point-sender.ts";
import { sendAt } from "./point-sender.ts";
import type { PointProbeOptions } from "./probe-frame.ts";
import { probePoints } from "./probe-frame.ts";
import { filePartPoints, pointWords } from "./probe-points.ts";
import { findFile, removeAll, searchRoots, shown } from "./target-disk.ts";

// Path traversal where the application writes (an upload's or an export's file name: CWE-22, "arbitrary
// file write"). Proven on the target's own disk, so only where it runs on this machine from its source
// tree: a plain new name is written first and looked for under the tree (or the temporary folder), which
// shows where names land; then `../` (or `....//`, for a one-pass strip) and a second new name, which must
// land one folder above. Every file is new, named with a unique token, and removed afterwards: nothing the
// application had is overwritten.

const NAME =
  /^(file_?name|filename|file|file_?path|filepath|path|pathname|dest|destination|target|save_?as|output)$/i;
const WEAK_NAME = /^(name|title|key|document|attachment|upload)$/i;
const FILE_WORDS =
  /file|upload|paste|document|attachment|import|export|backup|save|write|store|media|image|report/;

interface Hit {
  open: OpenPoint;
  control: Sent;
  traversal: Sent;
  /** The climb that left the folder: `../` or `....//`. */
  climb: string;
  /** Where each file landed, as a person finds it. */
  controlAt: string;
  escapedAt: string;
}

export async function probeWriteTraversal(
  run: ProbeRun,
  options: PointProbeOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const roots = searchRoots(run);
  if (roots.length === 0 || !run.target.writesAllowed || !["managed", "compose"].includes(run.target.mode))
    return {
      candidates: [],
      stats: {
        skipped: "the target does not run from a source tree on this machine, or writes are not allowed",
      },
    };
  const fileParts = filePartPoints(run.map.operations);
  const { hits, stats } = await probePoints(run, options, {
    select: (point) => fileParts.includes(point) || writesAFile(point),
    extraPoints: fileParts,
    test: (open) => testPoint(run, open, roots, fileParts.includes(open.point)),
  });
  const candidates = hits.map((hit) => {
    const input = fileParts.includes(hit.open.point)
      ? `the file name sent with body part ${hit.open.point.name}`
      : where(hit.open);
    return pointFinding(run, {
      open: hit.open,
      defectClass: "injection",
      family: "path-traversal-write",
      title: `Path traversal: ${input} of ${operationKey(hit.open.point.operation)} writes files outside their folder`,
      summary: `${operationKey(hit.open.point.operation)}: ${input} set to a new plain name wrote ${hit.controlAt}; set to ${hit.climb} and another new name, it wrote ${hit.escapedAt}, one folder above: the input names where a file is written, and ${hit.climb} leaves the folder meant for it.`,
      impact:
        "An attacker writes files anywhere the server's account can: a script the server then runs, a template, a configuration file, a key in an account's authorized keys.",
      evidence: [
        { label: "plain-name", sent: hit.control },
        { label: "traversal", sent: hit.traversal },
      ],
      severity: "critical",
      notes: [
        `on the target's disk: the plain name landed at ${hit.controlAt}, the ${hit.climb} name at ${hit.escapedAt} (both written by qaas with a unique name, and removed)`,
      ],
    });
  });
  return { candidates, stats: { ...stats, confirmed: candidates.length } };
}

/** A point that may name a file an operation writes. */
function writesAFile(point: InputPoint): boolean {
  if (point.in !== "body" && point.in !== "query") return false;
  const operation = point.operation;
  const writes = operation.graphql
    ? graphqlEffect(operation.graphql) !== "read"
    : !["GET", "HEAD", "OPTIONS"].includes(operation.method.toUpperCase());
  if (!writes) return false;
  const words = pointWords(point);
  return NAME.test(words.name) || (WEAK_NAME.test(words.name) && FILE_WORDS.test(words.operation));
}

/** `../` as sent, and `....//`, which a one-pass strip of `../` turns back into it. */
const CLIMBS = ["../", "....//"];

async function testPoint(
  run: ProbeRun,
  open: OpenPoint,
  roots: readonly string[],
  filePart: boolean,
): Promise<Hit | undefined> {
  const plain = `qaas-${uniqueToken()}.txt`;
  const escapes = CLIMBS.map(() => `qaas-${uniqueToken()}.txt`);
  // A file part carries the name beside a small text file; any other input is the name itself.
  const valueFor = (name: string): unknown =>
    filePart ? { filename: name, content: "qaas\n", contentType: "text/plain" } : name;
  try {
    const control = await sendAt(run, open, valueFor(plain));
    if (!control) return undefined;
    const landed = findFile(roots, plain);
    if (!landed) return undefined;
    for (const [index, climb] of CLIMBS.entries()) {
      const escaped = escapes[index]!;
      const traversal = await sendAt(run, open, valueFor(`${climb}${escaped}`));
      if (!traversal) continue;
      const above = path.resolve(path.dirname(landed), "..", escaped);
      if (fs.existsSync(above))
        return {
          open,
          control,
          traversal,
          climb,
          controlAt: shown(roots, landed),
          escapedAt: shown(roots, above),
        };
    }
    return undefined;
  } finally {
    removeAll(roots, [plain, ...escapes]);
  }
}

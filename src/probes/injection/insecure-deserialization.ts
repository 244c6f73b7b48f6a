import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { operationKey } from "../api/operation-index.ts";
import type { InputPoint } from "../auditor/input-points.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { answerShows } from "./answer-text.ts";
import { type PointFinding, pointFinding, where } from "./injection-finding.ts";
import { arithmetic } from "./markers.ts";
import type { OpenPoint, Sent } from "./point-sender.ts";
import { sendAt } from "./point-sender.ts";
import type { PointProbeOptions } from "./probe-frame.ts";
import { probePoints } from "./probe-frame.ts";
import { pointWords } from "./probe-points.ts";

// Insecure deserialisation. A field that carries saved state (a draft, a session, a snapshot…) gets a blob
// in each code-running format whose only effect is a multiplication of two random operands: a pickle that
// calls `operator.mul`, a YAML tag applying `operator.mul`, a node-serialize function that returns the
// product, each raw and base64-encoded as such blobs travel. Reported when the product shows in the answer
// (only a deserialiser that called the function can know it; the blob never spells it), confirmed by a
// second blob with other operands. Nothing but arithmetic is ever called.

const STATE_NAME =
  /^(state|data|blob|payload|session|object|obj|draft|snapshot|serialized|serialised|pickle|dump|saved|cache|cookie|token|context|prefs|preferences|settings|profile|cart|memento|restore|backup|value)$/i;
const STATE_WORDS =
  /restore|import|load|deserial|unserial|unpickle|resume|snapshot|draft|session|state|cache|backup|saved/;

function select(point: InputPoint): boolean {
  if (point.numeric || point.in === "path") return false;
  const words = pointWords(point);
  return STATE_NAME.test(words.name) || STATE_WORDS.test(words.operation);
}

interface Format {
  name: string;
  blob(left: number, right: number): string;
}

/** Pickle protocol 0: `operator.mul(left, right)` through REDUCE. */
function pickle(left: number, right: number): string {
  return `coperator\nmul\n(I${left}\nI${right}\ntR.`;
}

const base64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

const FORMATS: readonly Format[] = [
  { name: "pickle (base64)", blob: (left, right) => base64(pickle(left, right)) },
  { name: "pickle", blob: pickle },
  {
    name: "node-serialize function",
    blob: (left, right) => JSON.stringify({ qaas: `_$$ND_FUNC$$_function(){return ${left}*${right}}()` }),
  },
  {
    name: "node-serialize function (base64)",
    blob: (left, right) =>
      base64(JSON.stringify({ qaas: `_$$ND_FUNC$$_function(){return ${left}*${right}}()` })),
  },
  {
    name: "YAML python/object/apply",
    blob: (left, right) => `!!python/object/apply:operator.mul [${left}, ${right}]`,
  },
  {
    name: "YAML python/object/apply (base64)",
    blob: (left, right) => base64(`!!python/object/apply:operator.mul [${left}, ${right}]`),
  },
];

interface Hit {
  open: OpenPoint;
  format: string;
  evidence: Array<{ label: string; sent: Sent }>;
  products: [string, string];
}

export async function probeInsecureDeserialization(
  run: ProbeRun,
  options: PointProbeOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const { hits, stats } = await probePoints(run, options, {
    select,
    test: (open) => testPoint(run, open),
    acceptServerError: true,
  });
  const candidates = hits.map((hit) => pointFinding(run, findingOf(hit)));
  return { candidates, stats: { ...stats, confirmed: candidates.length } };
}

async function attempt(
  run: ProbeRun,
  open: OpenPoint,
  format: Format,
): Promise<{ sent: Sent; product: string } | undefined> {
  const numbers = arithmetic();
  const sent = await sendAt(run, open, format.blob(numbers.left, numbers.right));
  if (!sent || !answerShows(sent.exchange, numbers.product) || answerShows(open.exchange, numbers.product))
    return undefined;
  return { sent, product: numbers.product };
}

async function testPoint(run: ProbeRun, open: OpenPoint): Promise<Hit | undefined> {
  for (const format of FORMATS) {
    const first = await attempt(run, open, format);
    if (!first) continue;
    const second = await attempt(run, open, format);
    if (!second) continue;
    return {
      open,
      format: format.name,
      evidence: [
        { label: "deserialised-call", sent: first.sent },
        { label: "deserialised-call-again", sent: second.sent },
      ],
      products: [first.product, second.product],
    };
  }
  return undefined;
}

function findingOf(hit: Hit): PointFinding {
  const key = operationKey(hit.open.point.operation);
  return {
    open: hit.open,
    defectClass: "insecure-deserialization",
    family: "deserialization",
    title: `Insecure deserialisation of ${where(hit.open)} in ${key} (${hit.format})`,
    summary: `${key}: a ${hit.format} blob in ${where(hit.open)} whose only content is a call multiplying two numbers came back as the product ${hit.products[0]} (and ${hit.products[1]} for a second pair), a value the blob never spelled out: the server deserialises client data with a format that calls functions.`,
    impact: "An attacker who can call one function can call any: a crafted blob runs code on the server.",
    evidence: hit.evidence,
    confidence: 0.97,
    assertions: [
      {
        kind: "answer_lacks",
        step: "deserialised-call",
        text: hit.products[0],
        message:
          "client data must be parsed as data (JSON), never deserialised by a format that calls functions",
      },
    ],
  };
}

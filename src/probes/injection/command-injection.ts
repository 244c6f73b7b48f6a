import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { operationKey } from "../api/operation-index.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { answerShows } from "./answer-text.ts";
import { type PointFinding, pointFinding, where } from "./injection-finding.ts";
import { arithmetic, uniqueToken } from "./markers.ts";
import type { OpenPoint, Sent } from "./point-sender.ts";
import { sendAt } from "./point-sender.ts";
import type { PointProbeOptions } from "./probe-frame.ts";
import { probePoints } from "./probe-frame.ts";
import { baselineMs, sleepAlternation, sleepAssertionMs } from "./timed-proof.ts";

// OS command injection. The payload asks a shell to print `qaas` followed by the result of shell
// arithmetic (`echo qaas$((7411+313))`): only a shell that ran it answers `qaas7724`, so an application that
// merely echoes its input can never match. Each separator or substitution is tried after the baseline
// value, with the quotes a command line might wrap it in closed first. When no output comes back (a blind
// sink), a bounded time differential decides: `sleep 1` must delay the answer, three times, while `sleep 0`
// in the same place must not (timed-proof.ts).

interface Shape {
  name: string;
  wrap(command: string): string;
}

// Ordered by how often each shape is the one that works; `$()` also covers a double-quoted argument, and
// `;` what `||` and `";…;"` would add, so those are left out to spare the agent's shared request budget.
const SHAPES: readonly Shape[] = [
  { name: "$() substitution", wrap: (command) => `$(${command})` },
  { name: "$() substitution after closing a single quote", wrap: (command) => `'$(${command})'` },
  { name: "; separator", wrap: (command) => `;${command};` },
  { name: "; separator after closing a single quote", wrap: (command) => `';${command};'` },
  { name: "backtick substitution", wrap: (command) => `\`${command}\`` },
  { name: "newline separator", wrap: (command) => `\n${command}\n` },
  { name: "| pipe", wrap: (command) => `|${command} #` },
  { name: "&& separator", wrap: (command) => `&&${command} #` },
];

const TIMED: readonly Shape[] = [SHAPES[0]!, SHAPES[1]!, SHAPES[2]!];

/** `echo qaas$((L+R))` → `qaas<L+R>`: the expected text exists only once a shell computed it. */
function echoMarker(): { command: string; expected: string } {
  const numbers = arithmetic();
  return { command: `echo qaas$((${numbers.left}+${numbers.right}))`, expected: `qaas${numbers.sum}` };
}

/** cmd.exe has no arithmetic: a caret splits the word, and only cmd's parser joins it again. */
function windowsMarker(): { payload: string; expected: string } {
  const token = uniqueToken().slice(4);
  return { payload: `& echo qa^as${token} &`, expected: `qaas${token}` };
}

interface Hit {
  open: OpenPoint;
  shape: string;
  kind: "output" | "timed";
  evidence: Array<{ label: string; sent: Sent }>;
  expected?: string[];
  /** The ordinary answer time a timed proof was judged against. */
  baseMs?: number;
  detail: string;
}

export async function probeCommandInjection(
  run: ProbeRun,
  options: PointProbeOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const { hits, stats } = await probePoints(run, options, {
    select: () => true,
    stages: [
      (open) => outputShapes(run, open, shapesFor(open).slice(0, LIKELY_SHAPES)),
      async (open) =>
        (await outputShapes(run, open, shapesFor(open).slice(LIKELY_SHAPES))) ?? cmdExe(run, open),
      (open) => timed(run, open),
    ],
  });
  const candidates = hits.map((hit) => pointFinding(run, findingOf(hit)));
  return { candidates, stats: { ...stats, confirmed: candidates.length } };
}

/** How many shapes every point gets before any point gets the rest. */
const LIKELY_SHAPES = 4;

function shapesFor(open: OpenPoint): readonly Shape[] {
  return open.point.numeric
    ? SHAPES.filter((shape) => shape.name.startsWith("$()") || shape.name === "; separator")
    : SHAPES;
}

async function outputShapes(
  run: ProbeRun,
  open: OpenPoint,
  shapes: readonly Shape[],
): Promise<Hit | undefined> {
  for (const shape of shapes) {
    const first = echoMarker();
    const sent = await sendAt(run, open, `${open.value}${shape.wrap(first.command)}`);
    if (!sent || !answerShows(sent.exchange, first.expected) || answerShows(open.exchange, first.expected))
      continue;
    const second = echoMarker();
    const again = await sendAt(run, open, `${open.value}${shape.wrap(second.command)}`);
    if (!again || !answerShows(again.exchange, second.expected)) continue;
    return {
      open,
      shape: shape.name,
      kind: "output",
      evidence: [
        { label: "shell-arithmetic", sent },
        { label: "shell-arithmetic-again", sent: again },
      ],
      expected: [first.expected, second.expected],
      detail: `a shell evaluated the ${shape.name} in ${where(open)}: the answer shows ${first.expected}, the result of the arithmetic the request only spelled out, and ${second.expected} for a second sum`,
    };
  }
  return undefined;
}

async function cmdExe(run: ProbeRun, open: OpenPoint): Promise<Hit | undefined> {
  const windows = windowsMarker();
  const sent = await sendAt(run, open, `${open.value}${windows.payload}`);
  if (!sent || !answerShows(sent.exchange, windows.expected)) return undefined;
  const second = windowsMarker();
  const again = await sendAt(run, open, `${open.value}${second.payload}`);
  if (!again || !answerShows(again.exchange, second.expected)) return undefined;
  return {
    open,
    shape: "& separator (cmd.exe)",
    kind: "output",
    evidence: [
      { label: "cmd-echo", sent },
      { label: "cmd-echo-again", sent: again },
    ],
    expected: [windows.expected, second.expected],
    detail: `cmd.exe ran an \`& echo\` in ${where(open)}: the caret-split word came back joined (${windows.expected}), twice`,
  };
}

/** Blind sinks: `sleep 1` delays the answer by a second, three times; `sleep 0` in the same place does not. */
async function timed(run: ProbeRun, open: OpenPoint): Promise<Hit | undefined> {
  const base = await baselineMs(run, open);
  for (const shape of open.point.numeric ? TIMED.slice(0, 1) : TIMED) {
    const proof = await sleepAlternation(run, open, base, {
      sleep: `${open.value}${shape.wrap("sleep 1")}`,
      control: `${open.value}${shape.wrap("sleep 0")}`,
    });
    if (!proof) continue;
    return {
      open,
      shape: shape.name,
      kind: "timed",
      evidence: proof.evidence,
      baseMs: base,
      detail: `\`sleep 1\` as a ${shape.name} in ${where(open)} delayed the answer to ${proof.sleptMs.join(", ")} ms (baseline ${base} ms) while \`sleep 0\` answered in ${proof.controlMs.join(", ")} ms`,
    };
  }
  return undefined;
}

function findingOf(hit: Hit): PointFinding {
  const key = operationKey(hit.open.point.operation);
  return {
    open: hit.open,
    defectClass: "injection",
    family: "command",
    title: `OS command injection in ${where(hit.open)} of ${key} (${hit.kind === "output" ? hit.shape : `time-based, ${hit.shape}`})`,
    summary: `${key}: ${hit.detail}.`,
    impact:
      "An attacker runs any command the server's account may run: read and change its files and data, reach its network.",
    evidence: hit.evidence,
    confidence: hit.kind === "output" ? 0.97 : 0.85,
    assertions:
      hit.kind === "output"
        ? [
            {
              kind: "answer_lacks",
              step: hit.evidence[0]!.label,
              text: hit.expected![0]!,
              message: "input must never reach a shell: the shell computed the arithmetic it carried",
            },
          ]
        : [
            {
              kind: "duration_below",
              step: "sleep-1s",
              ms: sleepAssertionMs(hit.baseMs ?? hit.open.exchange.durationMs),
              message: "a shell sleep in the input must not delay the answer",
            },
          ],
  };
}

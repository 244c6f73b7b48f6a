import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { operationKey } from "../api/operation-index.ts";
import { endpointLocation } from "../api/probe-support.ts";
import { pointPlace, pointTag } from "../auditor/input-points.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { LogFiles } from "./log-files.ts";
import { uniqueToken } from "./markers.ts";
import type { OpenPoint, Sent } from "./point-sender.ts";
import { sendAt } from "./point-sender.ts";
import type { PointProbeOptions } from "./probe-frame.ts";
import { probePoints } from "./probe-frame.ts";

// Log injection (CWE-117): an input written to the application's log as it came, line breaks included, lets
// a client add lines of its own that read like the application's (a sign-in that never happened, an
// alert). Every string input gets a value whose second line starts with a token of its own; the log files
// the application writes in its folder are read back, and a line that STARTS with that token is the proof
// (an escaped `\r\n`, a JSON-encoded entry or a stripped break leaves it mid-line: the safe forms). All
// points are sent first and the logs read once after a short wait, so the probe costs one request per input;
// a second value with new tokens confirms each hit.

const SETTLE_MS = 1_200;

interface Pending {
  open: OpenPoint;
  sent: Sent;
  reach: string;
  forged: string;
}

interface Hit {
  open: OpenPoint;
  evidence: Array<{ label: string; sent: Sent }>;
  file: string;
  excerpt: string;
}

export async function probeLogInjection(
  run: ProbeRun,
  options: PointProbeOptions & { settleMs?: number },
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const root = run.context.target?.root;
  if (!root)
    return {
      candidates: [],
      stats: { note: "no source path in the profile: the application's logs cannot be read" },
    };
  const logs = LogFiles.watch(root);
  const settle = () => new Promise((resolve) => setTimeout(resolve, options.settleMs ?? SETTLE_MS));
  const pending: Pending[] = [];
  const { stats } = await probePoints(run, options, {
    select: (point) => !point.numeric,
    test: async (open) => {
      const attempt = await forge(run, open);
      if (attempt) pending.push(attempt);
      return undefined;
    },
  });
  await settle();
  logs.refresh();
  const logged = pending.filter((entry) => logs.find(entry.reach) !== undefined);
  const forgedOnce = logged.filter((entry) => startsLine(logs, entry.forged));
  const again = (await Promise.all(forgedOnce.map((entry) => forge(run, entry.open)))).filter(
    (entry): entry is Pending => entry !== undefined,
  );
  if (again.length > 0) {
    await settle();
    logs.refresh();
  }
  const hits: Hit[] = [];
  for (const second of again) {
    const first = forgedOnce.find((entry) => entry.open === second.open)!;
    const found = logs.find(second.forged);
    if (!found || !startsLine(logs, second.forged)) continue;
    hits.push({
      open: first.open,
      evidence: [
        { label: "forged-line", sent: first.sent },
        { label: "forged-line-again", sent: second.sent },
      ],
      file: found.file,
      excerpt: found.excerpt,
    });
  }
  const candidates = dedupe(hits).map((hit) => findingOf(run, hit));
  return {
    candidates,
    stats: {
      ...stats,
      log_files: logs.files(),
      inputs_logged: logged.length,
      lines_forged: forgedOnce.length,
      confirmed: candidates.length,
    },
  };
}

async function forge(run: ProbeRun, open: OpenPoint): Promise<Pending | undefined> {
  const reach = uniqueToken();
  const forged = uniqueToken();
  const sent = await sendAt(run, open, `${open.value}${reach}\r\n${forged} INFO forged by qaas`);
  return sent ? { open, sent, reach, forged } : undefined;
}

/** Whether a kept log line begins with `token`: the break the input carried was written as a break. */
function startsLine(logs: LogFiles, token: string): boolean {
  const found = logs.find(token);
  return found !== undefined && (found.before.endsWith("\n") || found.before.endsWith("\r"));
}

/** One finding per operation and log file: the inputs of one handler reach one logger call. */
function dedupe(hits: Hit[]): Hit[] {
  const seen = new Set<string>();
  return hits.filter((hit) => {
    const key = `${operationKey(hit.open.point.operation)} ${hit.file}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function findingOf(run: ProbeRun, hit: Hit): EnvelopeDraft {
  const point = hit.open.point;
  const key = operationKey(point.operation);
  const handler = point.operation.handler?.file;
  return buildFinding(run, {
    domain: "security",
    defectClass: "injection",
    title: `Log injection: ${pointPlace(point)} of ${key} is written to ${hit.file} with its line breaks`,
    summary: `${key}: a value of ${pointPlace(point)} whose second line starts with a token of qaas's own made ${hit.file} hold a line that begins with that token, twice (new tokens the second time): the input is logged without neutralising CR/LF, so a client can write log lines that read like the application's own.`,
    impact:
      "Anyone can add forged entries to the application's log (a sign-in that never happened, a false alert) and hide their own traces among them; log viewers may also run what the entry carries.",
    location: endpointLocation(point.operation),
    related: handler ? [{ kind: "file", value: handler }] : undefined,
    severity: "low",
    confidence: 0.9,
    discriminator: `log:${pointTag(point)}`,
    exchanges: hit.evidence.map(({ label, sent }) => ({ label, exchange: sent.exchange })),
    notes: [`${hit.file} after the request: ${run.masker.maskText(hit.excerpt).replace(/\r/g, "\\r")}`],
    suggestedFixArea: `the log call of ${handler ?? key} (encode CR/LF, or log structured fields)`,
  });
}

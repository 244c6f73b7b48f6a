import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { DefectClass } from "../../envelope/taxonomy.ts";
import { operationKey } from "../api/operation-index.ts";
import { endpointLocation } from "../api/probe-support.ts";
import { pointPlace, pointTag } from "../auditor/input-points.ts";
import type { ReproAssertion } from "../evidence/failing-test.ts";
import { buildFinding } from "../evidence/finding.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";
import type { OpenPoint, Sent } from "./point-sender.ts";

// One finding of a point-based injection probe: the exchanges that prove it (payload, confirmation,
// controls, baseline), a curl line, and, where a plain request replays it, a generated test asserting the
// correct behaviour. A form submitted with a fresh CSRF token cannot be replayed by a fixed request, so
// its evidence is the exchanges alone.

export interface PointFinding {
  open: OpenPoint;
  defectClass: DefectClass;
  /** The technique family, so two techniques at one point stay two findings (`command`, `template`…). */
  family: string;
  title: string;
  summary: string;
  impact: string;
  evidence: Array<{ label: string; sent: Sent }>;
  /** Assertions on the evidence steps (by label); none: the finding ships without a generated test. */
  assertions?: ReproAssertion[];
  notes?: string[];
  confidence?: number;
  severity?: EnvelopeDraft["severity"];
}

export function pointFinding(run: ProbeRun, finding: PointFinding): EnvelopeDraft {
  const { open } = finding;
  const point = open.point;
  const replayable = !open.form && finding.assertions && finding.assertions.length > 0;
  return buildFinding(run, {
    domain: "security",
    defectClass: finding.defectClass,
    title: finding.title,
    summary: `${finding.summary}${point.page ? ` The input was found on page ${point.page}.` : ""}`,
    impact: finding.impact,
    location: endpointLocation(point.operation),
    related: point.page ? [{ kind: "page", value: point.page }] : undefined,
    severity: finding.severity ?? severityFor(finding.defectClass),
    confidence: finding.confidence ?? 0.95,
    discriminator: `${finding.family}:${pointTag(point)}`,
    exchanges: [
      ...finding.evidence.map(({ label, sent }) => ({ label, exchange: sent.exchange })),
      { label: "baseline", exchange: open.exchange },
    ],
    notes: finding.notes,
    repro: replayable
      ? {
          title: `${operationKey(point.operation)} treats ${pointPlace(point)} as data`,
          steps: finding.evidence.map(({ label, sent }) => stepFromPrepared(label, sent.prepared, open.user)),
          assertions: finding.assertions!,
        }
      : undefined,
  });
}

/** `query q` / `body name` (a GraphQL field's argument by name) as the summaries say it. */
export function where(open: OpenPoint): string {
  return pointPlace(open.point);
}

/** A finding about a whole request body of an operation (an XML document, a serialised blob). */
export function operationFinding(
  run: ProbeRun,
  finding: Omit<PointFinding, "open" | "family"> & {
    operation: OpenPoint["point"]["operation"];
    user: string | undefined;
    baseline: OpenPoint["exchange"];
    discriminator: string;
    replayable: boolean;
  },
): EnvelopeDraft {
  const key = operationKey(finding.operation);
  return buildFinding(run, {
    domain: "security",
    defectClass: finding.defectClass,
    title: finding.title,
    summary: finding.summary,
    impact: finding.impact,
    location: endpointLocation(finding.operation),
    severity: finding.severity ?? severityFor(finding.defectClass),
    confidence: finding.confidence ?? 0.95,
    discriminator: finding.discriminator,
    exchanges: [
      ...finding.evidence.map(({ label, sent }) => ({ label, exchange: sent.exchange })),
      { label: "baseline", exchange: finding.baseline },
    ],
    notes: finding.notes,
    repro:
      finding.replayable && finding.assertions && finding.assertions.length > 0
        ? {
            title: `${key} does not resolve what the client's document asks it to`,
            steps: finding.evidence.map(({ label, sent }) =>
              stepFromPrepared(label, sent.prepared, finding.user),
            ),
            assertions: finding.assertions,
          }
        : undefined,
  });
}

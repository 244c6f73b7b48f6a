import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Severity } from "../../envelope/taxonomy.ts";
import { operationKey } from "../api/operation-index.ts";
import { endpointLocation } from "../api/probe-support.ts";
import { buildFinding } from "../evidence/finding.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import { statusOf } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { AcceptedForgery, OperationVerdict, TechniqueKind } from "./token-forgery.ts";
import { isSelf } from "./token-forgery.ts";

// One finding per operation that takes a forged token, except for a forgery several operations take: that
// is one flaw of the application's token verification, reported once where a person looks first (the
// caller's own record), with the other operations as related places. What an operation takes beyond
// that still gets its own finding.

const GLOBAL_MINIMUM = 3;
const KINDS: readonly TechniqueKind[] = ["alg-none", "guessed-key", "tampered", "unverified", "expired"];

export function forgeryFindings(run: ProbeRun, verdicts: readonly OperationVerdict[]): EnvelopeDraft[] {
  const affected = verdicts.filter((verdict) => verdict.accepted.length > 0);
  if (affected.length === 0) return [];
  const global = new Set(
    KINDS.filter((kind) => {
      const taking = verdicts.filter((verdict) =>
        verdict.accepted.some((entry) => entry.kind === kind),
      ).length;
      return taking >= GLOBAL_MINIMUM;
    }),
  );
  if (global.size === 0) return affected.map((verdict) => finding(run, verdict, []));
  const spread = affected
    .map((verdict) => ({ ...verdict, accepted: verdict.accepted.filter((entry) => global.has(entry.kind)) }))
    .filter((verdict) => verdict.accepted.length > 0);
  const lead = spread.find((verdict) => isSelf(verdict.operation)) ?? spread[0]!;
  const own = affected
    .map((verdict) => ({ ...verdict, accepted: verdict.accepted.filter((entry) => !global.has(entry.kind)) }))
    .filter((verdict) => verdict.accepted.length > 0);
  return [
    finding(
      run,
      lead,
      spread.filter((verdict) => verdict !== lead),
    ),
    ...own.map((verdict) => finding(run, verdict, [])),
  ];
}

function finding(
  run: ProbeRun,
  verdict: OperationVerdict,
  alike: readonly OperationVerdict[],
): EnvelopeDraft {
  const { operation, prepared, ownerAnswer, anonymous, accepted } = verdict;
  const key = operationKey(operation);
  const lead = strongest(accepted);
  const labels = accepted.map((entry) => entry.label);
  const owner = ownerAnswer.user ?? "the owner";
  const whose =
    lead.subject === owner
      ? `${owner}'s own data`
      : `the data of ${lead.subject}, a different user than the ${owner} whose token it was forged from`;
  const forgedStep = { ...stepFromPrepared("forged", prepared, undefined), forge: lead.forgery };
  const scope =
    alike.length > 0
      ? ` ${alike.length + 1} of the authenticated reads tried take it, so the flaw is in the application's token verification.`
      : "";
  return buildFinding(run, {
    domain: "security",
    defectClass: "broken-authentication",
    title: `${key} accepts a forged session token (${labels.join("; ")})`,
    summary: `${key} refuses anonymous callers (${statusOf(anonymous)}) and a token under a random signature (${statusOf(lead.control)}), but answered ${statusOf(lead.exchange)} with ${whose} to a token ${describe(lead)}, twice.${scope}`,
    impact: lead.impersonation
      ? "Anyone can mint a session for another user, administrators included, without their password."
      : lead.kind === "expired"
        ? "A stolen or leaked token keeps working after it expired: sessions cannot be bounded in time."
        : "Anyone can mint a session token the server trusts, and so act as any user it names.",
    location: endpointLocation(operation),
    related: alike.map((other) => endpointLocation(other.operation)),
    severity: severityOf(lead),
    confidence: 0.9,
    discriminator: "forged-token",
    exchanges: [
      { label: `forged (${lead.label})`, exchange: lead.exchange },
      ...(lead.subject === owner ? [] : [{ label: `${lead.subject}'s own answer`, exchange: lead.rightful }]),
      { label: "owner", exchange: ownerAnswer },
      { label: "control refused", exchange: lead.control },
      { label: "anonymous", exchange: anonymous },
      { label: "confirm", exchange: lead.confirm },
      ...accepted
        .filter((entry) => entry !== lead)
        .map((entry) => ({ label: `forged (${entry.label})`, exchange: entry.exchange })),
    ],
    notes:
      lead.secret !== undefined ? [`the key was found in a short list of common and guessable keys`] : [],
    repro: {
      title: `${key} refuses a forged session token`,
      steps: [forgedStep],
      assertions: [
        {
          kind: "not_success",
          step: "forged",
          message: `a token ${describe(lead)} must be refused`,
        },
      ],
    },
    suggestedFixArea: "token verification",
  });
}

function describe(entry: AcceptedForgery): string {
  return entry.kind === "expired" ? `that expired: ${entry.label}` : `forged with ${entry.label}`;
}

/** Impersonation first, then the forgeries that need nothing (no key, no signature). */
function strongest(accepted: readonly AcceptedForgery[]): AcceptedForgery {
  const order: TechniqueKind[] = ["alg-none", "unverified", "tampered", "guessed-key", "expired"];
  return [...accepted].sort(
    (a, b) =>
      Number(b.impersonation) - Number(a.impersonation) || order.indexOf(a.kind) - order.indexOf(b.kind),
  )[0]!;
}

/**
 * A token nobody signed (or signed with a guessable key) lets anyone name any user: critical even when the
 * operation answers everyone alike. An expired token only extends a session someone once had.
 */
function severityOf(entry: AcceptedForgery): Severity {
  return entry.kind === "expired" && !entry.impersonation ? "high" : "critical";
}

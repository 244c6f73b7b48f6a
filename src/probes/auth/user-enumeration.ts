import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { operationKey } from "../api/operation-index.ts";
import { endpointLocation } from "../api/probe-support.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import type { AnswerShape } from "./answer-shape.ts";
import { sameShape, shapeDifference, shapeOf } from "./answer-shape.ts";
import type { Attempt } from "./credential-attempt.ts";
import { attempt, identityOf, stepOf, unknownIdentity, wrongPassword } from "./credential-attempt.ts";
import type { CredentialOperation } from "./credential-operations.ts";

// User enumeration: does a sign-in (wrong password) or a password-reset request answer an existing account
// differently from an unknown one? Known accounts are the profile's (or throw-away) users, each asked at
// most twice so no lockout is ever approached; unknown ones are fresh random names at the same domain.
// A difference counts only when it is stable: every known-account answer alike, every unknown-account
// answer alike, the two groups apart. Timing counts only when large and consistent over four of each.

/** A timing difference must be this large (ms) and the slowest unknown-account answer this much faster. */
const TIMING_GAP_MS = 150;
const TIMING_RATIO = 2;

export async function checkUserEnumeration(
  run: ProbeRun,
  entries: readonly CredentialOperation[],
  users: readonly ProfileUser[],
): Promise<EnvelopeDraft[]> {
  const findings: EnvelopeDraft[] = [];
  for (const entry of entries) {
    if (entry.role !== "sign-in" && entry.role !== "reset-request") continue;
    const known = users
      .map((user) => identityOf(entry, user))
      .filter((identity): identity is string => identity !== undefined)
      .filter((identity, index, all) => all.indexOf(identity) === index)
      .slice(0, 2);
    if (known.length === 0) {
      run.notes.push(`${operationKey(entry.operation)}: no profile user's name fits ${entry.identityField}`);
      continue;
    }
    const finding = await enumerate(run, entry, known);
    if (finding) findings.push(finding);
  }
  return findings;
}

interface Round {
  known: Attempt[];
  unknown: Attempt[];
}

async function enumerate(
  run: ProbeRun,
  entry: CredentialOperation,
  known: readonly string[],
): Promise<EnvelopeDraft | undefined> {
  const round: Round = { known: [], unknown: [] };
  // Interleaved, so a change in the server's state over time cannot pass for a difference between groups.
  const plan = known.length > 1 ? [known[0]!, known[1]!] : [known[0]!, known[0]!];
  for (const identity of plan) {
    const asKnown = await attempt(run, entry, valuesFor(entry, identity));
    const asUnknown = await attempt(
      run,
      entry,
      valuesFor(entry, unknownIdentity(identity, entry.identityIsEmail)),
    );
    if (!asKnown || !asUnknown || broken(asKnown) || broken(asUnknown)) return undefined;
    round.known.push(asKnown);
    round.unknown.push(asUnknown);
  }
  const knownShapes = round.known.map(shape);
  const unknownShapes = round.unknown.map(shape);
  const knownAlike = knownShapes.every((item) => sameShape(item, knownShapes[0]!));
  const unknownAlike = unknownShapes.every((item) => sameShape(item, unknownShapes[0]!));
  if (!knownAlike || !unknownAlike) return undefined;
  if (!sameShape(knownShapes[0]!, unknownShapes[0]!)) {
    return finding(run, entry, round, shapeDifference(knownShapes[0]!, unknownShapes[0]!));
  }
  return timing(run, entry, known, round);
}

/** Identical answers: only a large, consistent delay on known accounts (a password hash checked) tells. */
async function timing(
  run: ProbeRun,
  entry: CredentialOperation,
  known: readonly string[],
  round: Round,
): Promise<EnvelopeDraft | undefined> {
  // A second pair per known account would be a third attempt on a lone one: two accounts are needed.
  if (known.length < 2 || !apart(round)) return undefined;
  for (const identity of known) {
    const asKnown = await attempt(run, entry, valuesFor(entry, identity));
    const asUnknown = await attempt(
      run,
      entry,
      valuesFor(entry, unknownIdentity(identity, entry.identityIsEmail)),
    );
    if (!asKnown || !asUnknown) return undefined;
    round.known.push(asKnown);
    round.unknown.push(asUnknown);
  }
  if (!apart(round)) return undefined;
  const slowest = Math.max(...round.unknown.map((item) => item.exchange.durationMs));
  const fastest = Math.min(...round.known.map((item) => item.exchange.durationMs));
  return finding(run, entry, round, [
    `timing: every known-account answer took at least ${Math.round(fastest)} ms, every unknown-account answer at most ${Math.round(slowest)} ms`,
  ]);
}

function apart(round: Round): boolean {
  const slowest = Math.max(...round.unknown.map((item) => item.exchange.durationMs));
  const fastest = Math.min(...round.known.map((item) => item.exchange.durationMs));
  return fastest - slowest >= TIMING_GAP_MS && fastest >= slowest * TIMING_RATIO;
}

function valuesFor(entry: CredentialOperation, identity: string) {
  return entry.role === "sign-in" ? { identity, password: wrongPassword() } : { identity };
}

function shape(item: Attempt): AnswerShape {
  const { identity, password } = item.values;
  const local = identity.includes("@") ? identity.slice(0, identity.indexOf("@")) : undefined;
  return shapeOf(item.exchange, [identity, ...(local ? [local] : []), ...(password ? [password] : [])]);
}

/** A 5xx or no answer: the operation failed, it told nothing about accounts. */
function broken(item: Attempt): boolean {
  const status = item.exchange.response?.status ?? 0;
  return status === 0 || status >= 500;
}

function finding(
  run: ProbeRun,
  entry: CredentialOperation,
  round: Round,
  differences: readonly string[],
): EnvelopeDraft {
  const key = operationKey(entry.operation);
  const what = entry.role === "sign-in" ? "sign-in (wrong password)" : "password-reset request";
  const [known, unknown] = [round.known[0]!, round.unknown[0]!];
  return buildFinding(run, {
    domain: "security",
    defectClass: "broken-authentication",
    title: `${key} tells existing accounts from unknown ones (${differences.join("; ")})`,
    summary: `The ${what} answers an existing account differently from an unknown one: ${differences.join("; ")}. Every answer for the ${round.known.length} existing-account attempts was alike, every answer for the ${round.unknown.length} unknown-account attempts was alike, and the two differ. Anyone can learn which accounts exist, then aim password guessing or phishing at them.`,
    impact:
      "Account names can be enumerated, which focuses credential stuffing, password guessing and phishing.",
    location: endpointLocation(entry.operation),
    severity: "medium",
    confidence: differences.some((text) => text.startsWith("timing")) ? 0.7 : 0.85,
    discriminator: "user-enumeration",
    exchanges: round.known.flatMap((item, index) => [
      { label: `existing account ${index + 1}`, exchange: item.exchange },
      { label: `unknown account ${index + 1}`, exchange: round.unknown[index]!.exchange },
    ]),
    repro: {
      title: `${key} answers existing and unknown accounts alike`,
      steps: [stepOf("known", known.exchange), stepOf("unknown", unknown.exchange)],
      assertions: [
        {
          kind: "same_response",
          steps: ["known", "unknown"],
          strip: [known.values.identity, unknown.values.identity],
          message: "an existing and an unknown account must get the same answer",
        },
      ],
    },
    suggestedFixArea: "authentication answers",
  });
}

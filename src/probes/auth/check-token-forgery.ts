import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { isAdminLike } from "../session/roles.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import { candidateSecrets, crackOffline } from "./guessable-secrets.ts";
import { sessionJwts } from "./session-tokens.ts";
import { EXPIRY_LEEWAY_MS, shortLivedToken } from "./short-lived-token.ts";
import { forgeryFindings } from "./token-findings.ts";
import type { ForgeryContext, OperationVerdict } from "./token-forgery.ts";
import { forgeryTargets, probeExpiry, probeOperation } from "./token-forgery.ts";

// The token-forgery check over a run: the JWTs the run's own sign-ins obtained, the issuer's key guessed
// offline from a short list, every authenticated read tried with forgeries, then the expired-token check
// once a short-lived token has expired.

/** Requests spent at most on guessing keys online, over all operations. */
const ONLINE_GUESS_BUDGET = 900;

export interface TokenForgeryStats {
  session_tokens: "jwt" | "not-jwt" | "none";
  operations_tried: number;
  operations_judged: number;
  issuer_key_guessed: boolean;
  online_key_guesses: number;
  expiry: string;
}

export interface TokenForgeryOptions {
  /** Clock-skew tolerance before an expired token's acceptance counts (default 65 s). */
  expiryLeewayMs?: number;
}

export async function checkTokenForgery(
  run: ProbeRun,
  users: readonly ProfileUser[],
  operations: Iterable<Operation>,
  options: TokenForgeryOptions = {},
): Promise<{ candidates: EnvelopeDraft[]; stats: TokenForgeryStats }> {
  const stats: TokenForgeryStats = {
    session_tokens: "none",
    operations_tried: 0,
    operations_judged: 0,
    issuer_key_guessed: false,
    online_key_guesses: 0,
    expiry: "not tested",
  };
  if (users.length === 0) return { candidates: [], stats };
  const tokens = await sessionJwts(run, users);
  if (tokens.length === 0) {
    stats.session_tokens = "not-jwt";
    run.notes.push("session tokens are not JWTs: the token-forgery check does not apply");
    return { candidates: [], stats };
  }
  stats.session_tokens = "jwt";
  const owner = tokens.find((token) => !isAdminLike(token.user.role)) ?? tokens[0]!;
  const secrets = candidateSecrets([run.target.profile?.name, run.map.openapi?.title, run.map.target]);
  const issuerKey = crackOffline(owner.jwt, secrets.offline);
  stats.issuer_key_guessed = issuerKey !== undefined;
  const context: ForgeryContext = {
    run,
    owner,
    others: tokens.filter((token) => token !== owner),
    issuerKey,
    secrets: secrets.online,
    onlineBudget: { left: ONLINE_GUESS_BUDGET },
    expiryLeewayMs: options.expiryLeewayMs ?? EXPIRY_LEEWAY_MS,
  };
  // Asked for first: the wait for it to expire runs while the other forgeries are tried.
  const shortLived = shortLivedToken(run, owner, context.expiryLeewayMs).catch(() => undefined);
  const targets = forgeryTargets(operations);
  stats.operations_tried = targets.length;
  const verdicts = (
    await mapConcurrent(targets, 3, (operation) => probeOperation(context, operation))
  ).filter((verdict): verdict is OperationVerdict => verdict !== undefined);
  stats.operations_judged = verdicts.length;
  stats.online_key_guesses = ONLINE_GUESS_BUDGET - context.onlineBudget.left;
  if (context.onlineBudget.left <= 0)
    run.notes.push(`online key guessing stopped after ${ONLINE_GUESS_BUDGET} requests`);
  const token = await shortLived;
  stats.expiry = token ? token.how : "no short-lived token could be had";
  await probeExpiry(context, verdicts, token);
  return { candidates: forgeryFindings(run, verdicts), stats };
}

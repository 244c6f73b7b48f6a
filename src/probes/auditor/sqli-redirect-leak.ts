import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { operationKey } from "../api/operation-index.ts";
import { endpointLocation } from "../api/probe-support.ts";
import { buildFinding } from "../evidence/finding.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { pointPlace } from "./input-points.ts";
import type { PointBaseline } from "./point-request.ts";
import { sendPointChain } from "./point-request.ts";
import { SQL_ERROR } from "./sql-signatures.ts";
import type { Shot } from "./sqli-shots.ts";
import { sqlErrorInRedirect } from "./sqli-shots.ts";

// A failed request answered by a redirect that carries the database's own error message in its URL
// (`/login?error=syntax error at or near "x"`): the error page never shows a 500, yet every visitor who
// breaks a query reads the SQL around it in the address bar. A finding of its own beside any injection:
// parameterised queries end the injection, not the habit of sending raw errors back. Confirmed by the same
// request again, while the ordinary value's answer carries no such error.

export async function redirectLeakFinding(
  run: ProbeRun,
  baseline: PointBaseline,
  leak: Shot,
): Promise<EnvelopeDraft | undefined> {
  if (!leak.exchange || sqlErrorInRedirect(baseline.exchange)) return undefined;
  const again = (await sendPointChain(run, baseline.user, leak.prepared))?.chain.find((exchange) =>
    sqlErrorInRedirect(exchange),
  );
  const error = sqlErrorInRedirect(again);
  if (!again || !error) return undefined;
  const key = operationKey(baseline.point.operation);
  const where = pointPlace(baseline.point);
  const location = again.response?.headers.location ?? "";
  return buildFinding(run, {
    domain: "security",
    defectClass: "sensitive-data-exposure",
    title: `Database errors are sent back in the redirect of ${key}`,
    summary: `${key}: with ${JSON.stringify(leak.value)} in ${where} the answer was a ${again.response?.status} redirect whose Location carries the database's error message (${error.text}), twice, while the ordinary value's redirect carried none.`,
    impact:
      "Anyone can read the application's SQL, table and column names from the address bar by breaking a query: it aims an injection and shows how the data is laid out.",
    location: endpointLocation(baseline.point.operation),
    severity: "low",
    confidence: 0.9,
    discriminator: "error-in-redirect",
    exchanges: [
      { label: "broken", exchange: leak.exchange },
      { label: "broken-again", exchange: again },
      { label: "baseline", exchange: baseline.exchange },
    ],
    notes: [`Location: ${location.slice(0, 300)}`],
    repro: {
      title: `${key} does not put database errors in its redirects`,
      steps: [stepFromPrepared("broken", leak.prepared, baseline.user)],
      assertions: [
        {
          kind: "header_not_matches",
          step: "broken",
          header: "location",
          pattern: SQL_ERROR.source,
          flags: "i",
          message: "a redirect must not carry the database's error message",
        },
      ],
    },
    suggestedFixArea: `the error handling of ${key} (log the database error; redirect with a generic message)`,
  });
}

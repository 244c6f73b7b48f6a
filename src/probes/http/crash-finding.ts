import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../envelope/envelope-draft.ts";
import type { ToolContext } from "../../tools/context.ts";
import { emitEnvelope } from "../../tools/servers/envelope-server.ts";
import { sessionPoolFor } from "../session/session-pool.ts";
import { curlLine } from "./curl.ts";
import { recordExchange } from "./exchange-record.ts";
import type { HttpExchange } from "./http-types.ts";
import { describeRequest, type TargetDeath, type TargetLiveness } from "./liveness.ts";

// What a run says when its target died: always a note in the ledger (when, after what, what the run did),
// and a finding when one request can be named as the cause. Confirmed (replayed alone on a restarted
// target, which died again) it is a high-severity denial of service; named only as the last request before
// an external target died, it says so and claims less.

const FOLDER = "target-liveness";

/** Reports a death: the ledger note the run's progress shows, then the finding if a culprit can be named. */
export async function reportTargetDeath(
  context: ToolContext,
  baseUrl: string,
  death: TargetDeath,
  liveness: TargetLiveness,
): Promise<void> {
  const named = death.culprit ?? death.knownCause ?? death.suspects[0];
  context.record(
    "target_down",
    {
      at: death.at,
      mode: death.mode,
      after: named ? describeRequest(named) : null,
      confirmed: death.culprit !== undefined,
      recovered: death.recovered,
      suspects: death.suspects.map(describeRequest),
      checks: death.checks,
      restarts: liveness.restarts,
      message: deathMessage(death),
    },
    context.agent.name,
  );
  const draft = crashFinding(context, baseUrl, death);
  if (draft) await emitEnvelope.run(draft, context);
}

/** One line for the run's progress and report. */
export function deathMessage(death: TargetDeath): string {
  const named = death.culprit ?? death.knownCause ?? death.suspects[0];
  const after = named ? ` after ${describeRequest(named)}` : "";
  const cause = death.culprit
    ? " (confirmed: sent alone to the restarted target, it took it down again)"
    : death.knownCause
      ? " (not replayed: a request to the same operation was confirmed to crash it earlier in this run)"
      : death.replayed > 0
        ? ` (none of the ${death.replayed} request(s) replayed alone took the restarted target down again)`
        : "";
  const next = death.recovered
    ? "restarted; the run goes on"
    : death.mode === "managed"
      ? "no restart left; the run stops sending to it"
      : "it is not restarted by qaas (external); the run stops sending to it";
  return `target stopped answering at ${death.at}${after}${cause}; ${next}`;
}

/** The finding for a death, or undefined when no request can be named with any confidence. */
export function crashFinding(
  context: ToolContext,
  baseUrl: string,
  death: TargetDeath,
): EnvelopeDraft | undefined {
  const confirmed = death.culprit !== undefined;
  // A managed target that did not die again on any single replay: the cause is not one request. One that
  // died again on an operation already confirmed to crash it adds nothing to that finding.
  if (!confirmed && (death.replayed > 0 || death.knownCause)) return undefined;
  const culprit = death.culprit ?? death.suspects[0];
  if (!culprit) return undefined;
  const alone = confirmed || death.suspects.length === 1;
  const notReplayed =
    death.mode === "external" ? "qaas does not restart an external target" : "the run had no restart left";
  const masker = sessionPoolFor(context, baseUrl).masker;
  const endpoint = endpointOf(context, culprit);
  const exchanges: Array<{ label: string; exchange: HttpExchange }> = [{ label: "crash", exchange: culprit }];
  if (death.replay) exchanges.push({ label: "replay-on-restarted-target", exchange: death.replay });
  for (const other of death.suspects.filter((suspect) => suspect !== culprit).slice(0, confirmed ? 0 : 3))
    exchanges.push({ label: "also-in-flight", exchange: other });
  const evidence: EnvelopeDraft["evidence"] = exchanges.map(({ label, exchange }, index) => ({
    kind: "exchange" as const,
    description: `${label}: ${exchange.request.method} ${masker.maskUrl(exchange.request.url)} → ${exchange.response?.status ?? exchange.error ?? "no answer"}`,
    uri: recordExchange(
      context,
      `${FOLDER}/${slug(endpoint)}-${death.at.replace(/\D/g, "").slice(8, 17)}/${String(index + 1).padStart(2, "0")}-${label}`,
      exchange,
      masker,
    ),
  }));
  evidence.push({
    kind: "note",
    description: `after the request the target stopped answering: ${death.checks.join("; ")}`,
  });
  if (!confirmed) {
    evidence.push({
      kind: "note",
      description: alone
        ? `not replayed (${notReplayed}): this is the only request the server was handling when it died, not a proven cause`
        : `not replayed (${notReplayed}); ${death.suspects.length} requests were in flight or just answered when it died: ${death.suspects.map(describeRequest).join(", ")}`,
    });
  }
  const request = describeRequest(culprit);
  return EnvelopeDraftSchema.parse({
    domain: "api",
    defect_class: "unhandled-error",
    title: confirmed
      ? `The server crashes on ${request}: one request takes the whole service down`
      : `The server stopped answering right after ${request}`,
    summary: masker.maskText(
      confirmed
        ? `After ${request} the target stopped answering (${death.checks.join("; ")}). Restarted and sent that request alone, it went down again: an error the application does not handle ends its process.`
        : `The target stopped answering (${death.checks.join("; ")}) while it was handling ${alone ? request : `${death.suspects.length} requests, the first of them ${request}`}. An unhandled error probably ended its process; the cause is not confirmed (${notReplayed}).`,
    ),
    location: {
      kind: "endpoint",
      value: endpoint,
      ...(confirmed
        ? {}
        : {
            related: death.suspects
              .filter((suspect) => suspect !== culprit)
              .slice(0, 5)
              .map((suspect) => ({ kind: "endpoint" as const, value: endpointOf(context, suspect) })),
          }),
    },
    evidence,
    reproduction: {
      steps: [
        `send ${request} (the curl line)`,
        `then GET ${new URL(culprit.request.url).origin}/ : the connection is refused until the server is restarted`,
      ],
      curl: curlLine(culprit, masker),
    },
    impact:
      "Anyone who can send this request can take the service down for every user until it is restarted (denial of service); every request in flight is lost with it.",
    severity: confirmed || alone ? "high" : "medium",
    confidence: confirmed ? 0.9 : alone ? 0.7 : 0.5,
    suggested_fix_area:
      "the handler of this request: catch the error it throws (or validate the input) so one request cannot end the process",
    autonomy_eligible: false,
    dedupe: { discriminator: "process-exit" },
  });
}

/** `METHOD /path`, as the system map's template when one matches the concrete path. */
function endpointOf(context: ToolContext, exchange: HttpExchange): string {
  const method = exchange.request.method.toUpperCase();
  const pathname = new URL(exchange.request.url).pathname;
  const operations = context.systemMap()?.operations ?? [];
  const template = operations.find(
    (operation) =>
      operation.method.toUpperCase() === method &&
      templatePattern(operation.path).test(pathname.replace(/\/+$/, "") || "/"),
  )?.path;
  return `${method} ${template ?? pathname}`;
}

function templatePattern(path: string): RegExp {
  const escaped = (path.replace(/\/+$/, "") || "/")
    .split(/(\{[^}]+\}|:[A-Za-z_][A-Za-z0-9_]*|<[^>]+>)/)
    .map((part, index) => (index % 2 === 1 ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("");
  return new RegExp(`^${escaped}$`);
}

function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .slice(0, 60);
}

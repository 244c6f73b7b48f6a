import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { operationKey } from "../api/operation-index.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import type { InputPoint } from "../auditor/input-points.ts";
import { withValue } from "../auditor/point-request.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { answerShows } from "./answer-text.ts";
import { type PointFinding, pointFinding, where } from "./injection-finding.ts";
import type { LoopbackListener } from "./loopback-listener.ts";
import { isLoopbackTarget, runListener } from "./loopback-listener.ts";
import { uniqueToken } from "./markers.ts";

// A target may fetch in the background after answering, and a loaded machine delays it further.
const LISTENER_WAIT_MS = 4000;

import type { OpenPoint, Sent } from "./point-sender.ts";
import { sendAt } from "./point-sender.ts";
import type { PointProbeOptions } from "./probe-frame.ts";
import { probePoints } from "./probe-frame.ts";
import { injectionPoints, pointWords } from "./probe-points.ts";

// Server-side request forgery. URL-shaped inputs (by name, by a `uri` format, by a URL-looking value) are
// set to an address of qaas's own loopback listener carrying a unique token; a host input gets the
// listener's host and port (and its port and path siblings theirs). Reported when the listener records a
// request with the token — the target fetched what the client named — and confirmed by a second token.
// Only ever the listener: the probe runs only when the target is on this machine's loopback, so 127.0.0.1
// is the same host for both and no other host is ever named.

const URL_NAME =
  /^(url|uri|link|href|src|source|callback|webhook|hook|endpoint|image|img|avatar|picture|photo|icon|logo|thumbnail|feed|rss|fetch|proxy|target|site|website|remote|resource|location|address|server|service|api|origin|reference|ref|document|import|load)$/i;
const URL_SUFFIX = /(url|uri|href|link|endpoint|webhook|callback|feed|src)$/i;
const HOST_NAME = /^(host|hostname|domain|server|server_?name|remote_?host|ip|addr)$/i;
const PORT_NAME = /^(port|remote_?port|server_?port)$/i;
const PATH_NAME = /^(path|pathname|resource_?path)$/i;
const SCHEME_NAME = /^(scheme|protocol|proto)$/i;

function kindOf(point: InputPoint): "url" | "host" | undefined {
  if (point.numeric) return undefined;
  const name = pointWords(point).name;
  const format = point.operation.parameters.find((parameter) => parameter.name === point.name)?.schema
    ?.format;
  if (typeof format === "string" && /^ur[il]/.test(format)) return "url";
  if (URL_NAME.test(name) || URL_SUFFIX.test(name)) return "url";
  if (HOST_NAME.test(name)) return "host";
  return undefined;
}

interface Hit {
  open: OpenPoint;
  evidence: Array<{ label: string; sent: Sent }>;
  tokens: [string, string];
  reflected: boolean;
  how: string;
}

export async function probeSsrf(
  run: ProbeRun,
  options: PointProbeOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  if (!isLoopbackTarget(run.target.baseUrl)) {
    return {
      candidates: [],
      stats: {
        note: "not run: the target is not on this machine's loopback, and the probe may only name qaas's own listener",
      },
    };
  }
  const listener = await runListener(run.context);
  const siblings = injectionPoints(run.map, { includeWrites: run.target.writesAllowed });
  const { hits, stats } = await probePoints(run, options, {
    select: (point) => kindOf(point) !== undefined,
    test: (open) => testPoint(run, open, listener, siblings),
    acceptServerError: true,
  });
  const candidates = hits.map((hit) => pointFinding(run, findingOf(hit)));
  return {
    candidates,
    stats: { ...stats, listener: `127.0.0.1:${listener.port}`, confirmed: candidates.length },
  };
}

/** The request with the point (and, for a host, its port and path siblings) aimed at the listener. */
function aim(
  open: OpenPoint,
  siblings: readonly InputPoint[],
  listener: LoopbackListener,
  token: string,
  form: "url" | "localhost",
): { value: string; edit?: (prepared: PreparedRequest) => PreparedRequest } {
  const kind = kindOf(open.point)!;
  const url = listener.url(token, "ssrf");
  if (kind === "url") return { value: form === "localhost" ? url.replace("127.0.0.1", "localhost") : url };
  const same = siblings.filter(
    (point) => point.operation === open.point.operation && point.in === open.point.in,
  );
  const sibling = (name: RegExp) => same.find((point) => name.test(pointWords(point).name));
  const port = sibling(PORT_NAME);
  const path = sibling(PATH_NAME);
  // A scheme input left at an example value ("string") would make the fetch fail before it leaves.
  const scheme = sibling(SCHEME_NAME);
  if (!port) return { value: `127.0.0.1:${listener.port}/ssrf/${token}?` };
  return {
    value: form === "localhost" ? "localhost" : "127.0.0.1",
    edit: (prepared) => {
      let edited = withValue(prepared, port, listener.port);
      edited = path ? withValue(edited, path, `/ssrf/${token}`) : edited;
      edited = scheme ? withValue(edited, scheme, "http") : edited;
      return edited;
    },
  };
}

async function attempt(
  run: ProbeRun,
  open: OpenPoint,
  siblings: readonly InputPoint[],
  listener: LoopbackListener,
  form: "url" | "localhost",
): Promise<{ sent: Sent; token: string } | undefined> {
  const token = uniqueToken();
  const aimed = aim(open, siblings, listener, token, form);
  const sent = await sendAt(run, open, aimed.value, { edit: aimed.edit });
  if (!sent || !(await listener.waitFor(token, LISTENER_WAIT_MS))) return undefined;
  return { sent, token };
}

async function testPoint(
  run: ProbeRun,
  open: OpenPoint,
  listener: LoopbackListener,
  siblings: readonly InputPoint[],
): Promise<Hit | undefined> {
  for (const form of ["url", "localhost"] as const) {
    const first = await attempt(run, open, siblings, listener, form);
    if (!first) continue;
    const second = await attempt(run, open, siblings, listener, form);
    if (!second) continue;
    return {
      open,
      evidence: [
        { label: "listener-url", sent: first.sent },
        { label: "listener-url-again", sent: second.sent },
      ],
      tokens: [first.token, second.token],
      reflected: answerShows(first.sent.exchange, first.token),
      how:
        kindOf(open.point) === "host"
          ? "a host of qaas's loopback listener"
          : `the URL of qaas's loopback listener${form === "localhost" ? " (as localhost)" : ""}`,
    };
  }
  return undefined;
}

function findingOf(hit: Hit): PointFinding {
  const key = operationKey(hit.open.point.operation);
  return {
    open: hit.open,
    defectClass: "ssrf",
    family: "ssrf",
    title: `Server-side request forgery through ${where(hit.open)} of ${key}${hit.reflected ? " (response shown)" : " (blind)"}`,
    summary: `${key}: with ${where(hit.open)} set to ${hit.how} and a unique token, the server requested it (tokens ${hit.tokens[0]} and ${hit.tokens[1]}, both recorded by the listener)${hit.reflected ? " and put what it fetched in its answer" : ""}: it fetches any address the client names.`,
    impact:
      "An attacker makes the server reach internal services, cloud metadata endpoints and hosts behind the firewall, with the server's network position and credentials.",
    evidence: hit.evidence,
    notes: [`loopback listener hits: ${hit.tokens.join(", ")}`],
  };
}

import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import { operationKey } from "../api/operation-index.ts";
import type { ReproStep } from "../evidence/failing-test.ts";
import { buildFinding } from "../evidence/finding.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import { joinUrl, pathParameterNames, toTemplateForm } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send } from "../session/probe-run.ts";
import type { MappedPath } from "./misconfig-support.ts";
import { getMapped, locationOf } from "./misconfig-support.ts";

// CORS that lets another site read credentialed answers (CWE-942): an answer carrying the caller's data
// whose Access-Control-Allow-Origin echoes an origin the application cannot trust — any origin, `null`
// (sandboxed frames, data: URLs), or a look-alike of its own domain that a careless check accepts
// (`evil<domain>` for an endsWith test, `<domain>.evil` for a startsWith or contains test) — together
// with Access-Control-Allow-Credentials: true. Each verdict is confirmed with a second origin of the same
// kind; `*` without credentials is how public data is meant to be shared and is never reported.

const MAX_TARGETS = 60;
const MAX_RELATED = 10;
const MAX_LOOKALIKE_TARGETS = 12;

interface OriginTrick {
  kind: "arbitrary" | "null" | "suffix" | "prefix";
  /** What the trick shows, for the title. */
  label: string;
  first: string;
  second: string;
}

/** Domains the application may trust: its host (when named), its users' email domains, its documents' servers. */
export function trustedDomains(run: ProbeRun): string[] {
  const domains = new Set<string>();
  const add = (host: string | undefined) => {
    const clean = host?.toLowerCase().replace(/^www\./, "");
    if (!clean || /^[\d.]+$|^\[|^localhost$|\.invalid$|\.local$/.test(clean) || !clean.includes(".")) return;
    domains.add(clean);
  };
  add(hostOf(run.target.baseUrl));
  for (const user of run.sessions.users()) add(user.username?.split("@")[1]);
  const servers = (run.map.openapi?.document.servers as Array<{ url?: string }> | undefined) ?? [];
  for (const server of servers) add(hostOf(server.url ?? ""));
  return [...domains].slice(0, 3);
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
}

export function originTricks(domains: readonly string[]): OriginTrick[] {
  const tricks: OriginTrick[] = [
    {
      kind: "arbitrary",
      label: "any Origin",
      first: "https://qaas-probe.invalid",
      second: "https://qaas-other.invalid",
    },
    { kind: "null", label: "the null Origin", first: "null", second: "null" },
  ];
  for (const domain of domains) {
    tricks.push({
      kind: "suffix",
      label: `any Origin ending in ${domain}`,
      first: `https://qaasprobe${domain}`,
      second: `https://qaas-other-${domain}`,
    });
    tricks.push({
      kind: "prefix",
      label: `any Origin starting with ${domain}`,
      first: `https://${domain}.qaas-probe.invalid`,
      second: `https://${domain}.qaas-other.invalid`,
    });
  }
  return tricks;
}

/** JSON keys of data a cross-site reader would want: who the user is and how to act as them. */
const PERSONAL_FIELDS = /"(e-?mail|user_?name|phone|address|token|api_?key|balance|iban|ssn)"\s*:/i;

/** Whether an answer carries any sign of a CORS policy (an allow header, or Vary on the Origin). */
function speaksCors(exchange: HttpExchange): boolean {
  const headers = exchange.response?.headers ?? {};
  return (
    Object.keys(headers).some((name) => name.toLowerCase().startsWith("access-control-")) ||
    /\borigin\b/i.test(headers.vary ?? "")
  );
}

/** Whether an answer grants `origin` read access with credentials. */
export function grantsCredentialed(exchange: HttpExchange | undefined, origin: string): boolean {
  const headers = exchange?.response?.headers ?? {};
  return (
    headers["access-control-allow-credentials"]?.trim().toLowerCase() === "true" &&
    headers["access-control-allow-origin"]?.trim() === origin
  );
}

interface Granted {
  target: MappedPath;
  trick: OriginTrick;
  first: HttpExchange;
  second: HttpExchange;
}

function corsTargets(run: ProbeRun): MappedPath[] {
  const gets = run.map.operations
    .filter(
      (operation) =>
        operation.method.toUpperCase() === "GET" && pathParameterNames(operation.path).length === 0,
    )
    // Answers that carry user data come first: they are what CORS must protect. A documented answer with
    // personal fields before any other signed-in read, public reads last.
    .map((operation) => ({ operation, rank: protectionRank(operation) }))
    .sort((a, b) => a.rank - b.rank || a.operation.path.localeCompare(b.operation.path))
    .map(({ operation }) => operation)
    .map((operation) => ({ path: toTemplateForm(operation.path), operation }));
  const entry = run.target.profile?.ui?.entry ?? "/";
  const targets = gets.some((target) => target.path === entry) ? gets : [...gets, { path: entry }];
  return targets.slice(0, MAX_TARGETS);
}

/** Paths that by name answer the caller's own account. */
const SELF_PATH = /\/(me|profile|account|whoami|current-?user|settings)(\/|$)/i;

function protectionRank(operation: Operation): number {
  if (operation.security === "public") return 2;
  const personal =
    SELF_PATH.test(operation.path) || PERSONAL_FIELDS.test(JSON.stringify(operation.responses ?? {}));
  return personal ? 0 : 1;
}

export async function checkCors(
  run: ProbeRun,
  user: string | undefined,
  stats: { cors_checked: number },
): Promise<EnvelopeDraft[]> {
  const tricks = originTricks(trustedDomains(run));
  const granted: Granted[] = [];
  const targets = corsTargets(run);
  const open = new Set(targets);
  const answered = new Set<MappedPath>();
  const reflected = new Set<MappedPath>();
  const corsAware = new Set<MappedPath>();
  const personal = new Set<MappedPath>();
  for (const trick of tricks) {
    // Look-alikes of the application's own domains only matter where an allow-list exists: a few routes
    // that answered are enough to find one.
    // Routes whose answers showed any CORS header come first (a per-route allow-list is found there), then
    // those answering personal data (what a cross-site read would be after).
    const rank = (target: MappedPath) => (corsAware.has(target) ? 0 : personal.has(target) ? 1 : 2);
    const pool =
      trick.kind === "arbitrary" || trick.kind === "null"
        ? [...open]
        : [...open]
            .filter((target) => answered.has(target))
            .sort((a, b) => rank(a) - rank(b))
            .slice(0, MAX_LOOKALIKE_TARGETS);
    await mapConcurrent(pool, 6, async (target) => {
      stats.cors_checked += 1;
      const first = await getMapped(run, user, target, { origin: trick.first });
      if (!first || !isSuccess(first)) return;
      answered.add(target);
      if (speaksCors(first)) corsAware.add(target);
      if (PERSONAL_FIELDS.test(first.response?.body ?? "")) personal.add(target);
      if (!grantsCredentialed(first, trick.first)) return;
      reflected.add(target);
      const second = await getMapped(run, user, target, { origin: trick.second });
      if (!second || !grantsCredentialed(second, trick.second)) return;
      if (!(await carriesUserData(run, user, target, first))) return;
      granted.push({ target, trick, first, second });
      open.delete(target);
    });
  }
  const preflight = await checkPreflights(run, stats, tricks[0]!);
  if (granted.length === 0) return preflight;
  // A CORS policy is configured in one place: every route that grants is one finding, the first place
  // named and the others related; pre-flights of the same policy ride along.
  const everywhere = answered.size > 1 && reflected.size === answered.size;
  granted.sort((a, b) => a.target.path.localeCompare(b.target.path));
  const finding = findingOf(run, user, granted, everywhere);
  const preflightPlaces = preflight.map((draft) => ({
    kind: draft.location.kind,
    value: draft.location.value,
  }));
  if (preflightPlaces.length > 0)
    finding.location.related = [...(finding.location.related ?? []), ...preflightPlaces].slice(
      0,
      MAX_RELATED,
    );
  return [finding];
}

/** Signed-in data: the answer as the user differs from the anonymous one (which is refused or other). */
async function carriesUserData(
  run: ProbeRun,
  user: string | undefined,
  target: MappedPath,
  answer: HttpExchange,
): Promise<boolean> {
  if (user === undefined) return false;
  if (target.operation && target.operation.security === "required") return true;
  const anonymous = await getMapped(run, undefined, target);
  if (!anonymous?.response) return false;
  return !isSuccess(anonymous) || anonymous.response.body !== answer.response?.body;
}

function findingOf(
  run: ProbeRun,
  user: string | undefined,
  group: Granted[],
  everywhere: boolean,
): EnvelopeDraft {
  const chosen = group[0]!;
  const related = group.slice(1, MAX_RELATED + 1).map((entry) => locationOf(entry.target));
  const step: ReproStep = {
    name: "cors",
    as: user,
    method: "GET",
    path: chosen.target.path,
    headers: { origin: chosen.trick.first },
  };
  return buildFinding(run, {
    domain: "security",
    defectClass: "misconfiguration",
    title: `CORS lets ${chosen.trick.label} read ${everywhere ? "the API's answers" : `GET ${chosen.target.path}`} with credentials`,
    summary: `GET ${chosen.target.path} as ${user} answered Access-Control-Allow-Origin: ${chosen.trick.first} with Access-Control-Allow-Credentials: true, and did the same for ${chosen.trick.second}${everywhere ? `; so did every other GET checked (${group.length})` : group.length > 1 ? `; so did ${group.length - 1} other GET(s)` : ""}. The answer carries the signed-in user's data.`,
    impact:
      "A web site the signed-in user visits can call the API with the user's cookies and read the answers.",
    location: locationOf(chosen.target),
    related: related.length > 0 ? related : undefined,
    severity: "medium",
    confidence: 0.9,
    discriminator: "cors",
    exchanges: [
      { label: "origin-1", exchange: chosen.first },
      { label: "origin-2", exchange: chosen.second },
    ],
    repro: {
      title: "CORS does not grant credentials to an untrusted origin",
      steps: [step],
      assertions: [
        {
          kind: "header_not",
          step: "cors",
          header: "access-control-allow-origin",
          value: chosen.trick.first,
          message: "an untrusted origin must not be allowed with credentials",
        },
      ],
    },
  });
}

/**
 * Pre-flights of credentialed writes: an OPTIONS answer that allows an arbitrary origin with credentials
 * lets any site send the write with the user's cookies and read the answer.
 */
async function checkPreflights(
  run: ProbeRun,
  stats: { cors_checked: number },
  trick: OriginTrick,
): Promise<EnvelopeDraft[]> {
  const writes = new Map<string, Operation>();
  for (const operation of run.map.operations) {
    const method = operation.method.toUpperCase();
    if (!["POST", "PUT", "PATCH", "DELETE"].includes(method) || operation.security === "public") continue;
    const path = toTemplateForm(operation.path);
    if (!writes.has(path)) writes.set(path, operation);
  }
  const findings: EnvelopeDraft[] = [];
  const preflight = (operation: Operation, origin: string) =>
    send(run, undefined, {
      method: "OPTIONS",
      url: joinUrl(run.target.baseUrl, operation.path.replace(/\{[^}]+\}/g, "1")),
      headers: {
        origin,
        "access-control-request-method": operation.method.toUpperCase(),
        "access-control-request-headers": "content-type, authorization",
      },
    });
  for (const operation of [...writes.values()].slice(0, 10)) {
    stats.cors_checked += 1;
    const first = await preflight(operation, trick.first);
    if (!grantsCredentialed(first, trick.first)) continue;
    const second = await preflight(operation, trick.second);
    if (!first || !second || !grantsCredentialed(second, trick.second)) continue;
    findings.push(
      buildFinding(run, {
        domain: "security",
        defectClass: "misconfiguration",
        title: `CORS pre-flight lets any Origin send ${operationKey(operation)} with credentials`,
        summary: `OPTIONS ${operation.path} with Origin ${trick.first} answered Access-Control-Allow-Origin: ${trick.first} and Access-Control-Allow-Credentials: true (the same for ${trick.second}).`,
        impact: "Any web site can send this write with the signed-in user's cookies and read the answer.",
        location: { kind: "endpoint", value: operationKey(operation) },
        severity: "medium",
        confidence: 0.85,
        discriminator: "cors-preflight",
        exchanges: [
          { label: "preflight-1", exchange: first },
          { label: "preflight-2", exchange: second },
        ],
      }),
    );
    break;
  }
  return findings;
}

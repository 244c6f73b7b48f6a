import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import { operationKey } from "../api/operation-index.ts";
import type { ReproAssertion, ReproStep } from "../evidence/failing-test.ts";
import { buildFinding } from "../evidence/finding.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import { joinUrl, pathOfUrl, pathParameterNames, toTemplateForm } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send, untilBudget, usableUsers } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";
import { DEBUG_SEGMENT } from "./exposure-scan.ts";
import { findEnvironment, findSecrets } from "./sensitive-patterns.ts";

export interface MisconfigurationOptions {
  /** Also try a short list of well-known debug paths the map does not list. */
  guess_paths?: boolean;
}

const PROBE_ORIGIN = "https://qaas-probe.invalid";
const OTHER_ORIGIN = "https://qaas-other.invalid";
const WELL_KNOWN = [
  "/.env",
  "/.git/config",
  "/debug",
  "/debug/vars",
  "/env",
  "/actuator/env",
  "/actuator",
  "/server-status",
  "/phpinfo.php",
  "/config.json",
];

/**
 * check_misconfiguration: CORS that reflects an arbitrary Origin (or `*`) together with credentials; debug,
 * environment and metrics routes that answer anonymously with environment values, secrets or internals;
 * directory listings; and, once per target at the entry page, missing security headers.
 */
export async function checkMisconfiguration(
  run: ProbeRun,
  options: MisconfigurationOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const candidates: EnvelopeDraft[] = [];
  const stats = { cors_checked: 0, debug_checked: 0, entry_checked: false };
  const exhausted = await untilBudget(run, async () => {
    const users = await usableUsers(run);
    const user = users[0]?.name;
    const [cors, debug, headers] = await Promise.all([
      checkCors(run, user, stats),
      checkDebug(run, options, stats),
      checkEntryHeaders(run, stats),
    ]);
    candidates.push(...cors, ...debug, ...headers);
  });
  return { candidates, stats: { ...stats, budget_exhausted: exhausted } };
}

function get(
  run: ProbeRun,
  user: string | undefined,
  path: string,
  headers: Record<string, string> = {},
): Promise<HttpExchange | undefined> {
  return send(run, user, {
    method: "GET",
    url: joinUrl(run.target.baseUrl, path),
    headers: { accept: "application/json, text/html;q=0.9, */*;q=0.8", ...headers },
  });
}

function corsVerdict(
  exchange: HttpExchange | undefined,
  origin: string,
): "reflects" | "wildcard" | undefined {
  const headers = exchange?.response?.headers ?? {};
  const allowOrigin = headers["access-control-allow-origin"];
  if (headers["access-control-allow-credentials"]?.toLowerCase() !== "true") return undefined;
  if (allowOrigin === origin) return "reflects";
  if (allowOrigin === "*") return "wildcard";
  return undefined;
}

async function checkCors(
  run: ProbeRun,
  user: string | undefined,
  stats: { cors_checked: number },
): Promise<EnvelopeDraft[]> {
  const gets = run.map.operations
    .filter(
      (operation) =>
        operation.method.toUpperCase() === "GET" && pathParameterNames(operation.path).length === 0,
    )
    .sort((a, b) => Number(b.documented) - Number(a.documented) || a.path.localeCompare(b.path))
    .slice(0, 4);
  const targets: Array<{ path: string; operation?: Operation }> = [
    ...gets.map((operation) => ({ path: toTemplateForm(operation.path), operation })),
    { path: run.target.profile?.ui?.entry ?? "/" },
  ];
  const locationOf = (target: { path: string; operation?: Operation }) =>
    target.operation
      ? { kind: "endpoint" as const, value: operationKey(target.operation) }
      : { kind: "endpoint" as const, value: `GET ${target.path}` };
  stats.cors_checked += targets.length;
  const answers = await Promise.all(
    targets.map((target) => get(run, user, target.path, { origin: PROBE_ORIGIN })),
  );
  const reflecting = targets
    .map((target, index) => ({
      target,
      first: answers[index],
      verdict: corsVerdict(answers[index], PROBE_ORIGIN),
    }))
    .filter((entry) => entry.first !== undefined && entry.verdict !== undefined);
  const chosen = reflecting[0];
  if (!chosen?.first || !chosen.verdict) return [];
  // A second, unrelated origin rules out an allow-list that happens to contain the first.
  const second = await get(run, user, chosen.target.path, { origin: OTHER_ORIGIN });
  if (!second || corsVerdict(second, OTHER_ORIGIN) !== chosen.verdict) return [];
  const step: ReproStep = {
    name: "cors",
    as: user,
    method: "GET",
    path: chosen.target.path,
    headers: { origin: "https://qaas-attacker.invalid" },
  };
  const related = reflecting.slice(1).map((entry) => locationOf(entry.target));
  return [
    buildFinding(run, {
      domain: "security",
      defectClass: "misconfiguration",
      title:
        chosen.verdict === "reflects"
          ? "CORS reflects any Origin and allows credentials"
          : "CORS allows any origin (*) together with credentials",
      summary: `GET ${chosen.target.path} answered Access-Control-Allow-Origin: ${chosen.verdict === "reflects" ? "<the request's Origin>" : "*"} with Access-Control-Allow-Credentials: true, for two unrelated origins${related.length > 0 ? `; so did ${related.map((location) => location.value).join(", ")}` : ""}. Reported once: CORS is configured in one place.`,
      impact:
        "Any web site a signed-in user visits can call the API with the user's cookies and read the answers.",
      location: locationOf(chosen.target),
      related: related.length > 0 ? related : undefined,
      severity: severityFor("misconfiguration", { credentialed: true }),
      confidence: 0.9,
      discriminator: "cors",
      exchanges: [
        { label: "origin-1", exchange: chosen.first },
        { label: "origin-2", exchange: second },
      ],
      repro: {
        title: "CORS does not grant credentials to an arbitrary origin",
        steps: [step],
        assertions: [
          {
            kind: "header_not",
            step: "cors",
            header: "access-control-allow-origin",
            value: "https://qaas-attacker.invalid",
            message: "an unknown origin must not be allowed with credentials",
          },
        ],
      },
    }),
  ];
}

function looksLikeMetrics(exchange: HttpExchange): boolean {
  const body = exchange.response?.body ?? "";
  if (/^# (HELP|TYPE) \w+/m.test(body)) return true;
  const json = exchange.response?.json;
  if (!json || typeof json !== "object") return false;
  const keys = JSON.stringify(Object.keys(json as object)).toLowerCase();
  return (
    ["heapused", "memoryusage", "rss", "uptime", "pid", "versions", "cpuusage", "heap", "threads"].filter(
      (key) => keys.includes(key),
    ).length >= 2
  );
}

async function checkDebug(
  run: ProbeRun,
  options: MisconfigurationOptions,
  stats: { debug_checked: number },
): Promise<EnvelopeDraft[]> {
  const paths = new Map<string, Operation | undefined>();
  const debugShaped = (path: string) =>
    toTemplateForm(path)
      .split("/")
      .some((segment) => DEBUG_SEGMENT.test(segment));
  for (const operation of run.map.operations) {
    if (
      operation.method.toUpperCase() !== "GET" ||
      operation.security === "public" ||
      pathParameterNames(operation.path).length > 0
    )
      continue;
    if (debugShaped(operation.path)) paths.set(toTemplateForm(operation.path), operation);
  }
  for (const route of run.map.routes) {
    if (
      route.method.toUpperCase() === "GET" &&
      debugShaped(route.path) &&
      pathParameterNames(route.path).length === 0 &&
      !paths.has(toTemplateForm(route.path))
    ) {
      const documented = run.map.operations.find(
        (operation) =>
          toTemplateForm(operation.path) === toTemplateForm(route.path) && operation.security === "public",
      );
      if (!documented) paths.set(toTemplateForm(route.path), undefined);
    }
  }
  if (options.guess_paths !== false)
    for (const path of WELL_KNOWN)
      if (
        !paths.has(path) &&
        !run.map.operations.some((operation) => toTemplateForm(operation.path) === path)
      )
        paths.set(path, undefined);
  const findings: EnvelopeDraft[] = [];
  await mapConcurrent([...paths.entries()], 6, async ([path, operation]) => {
    stats.debug_checked += 1;
    const exchange = await get(run, undefined, path);
    if (!exchange || !isSuccess(exchange)) return;
    const body = exchange.response?.body ?? "";
    const json = exchange.response?.json;
    const environment = json !== undefined ? findEnvironment(json) : undefined;
    const envFile =
      /^[A-Z][A-Z0-9_]+=.+$/m.test(body) &&
      /(SECRET|PASSWORD|TOKEN|KEY)[A-Z0-9_]*=/m.test(body) &&
      !exchange.response?.contentType.includes("html");
    const gitConfig = /^\[core\]/m.test(body) && /repositoryformatversion/.test(body);
    const secrets = findSecrets(json, body);
    const listing = /<title>\s*Index of \//i.test(body);
    const metrics =
      operation !== undefined || !WELL_KNOWN.includes(path) ? looksLikeMetrics(exchange) : false;
    let what: string | undefined;
    let secretsExposed = false;
    if (environment || envFile || gitConfig || secrets.length > 0) {
      what = environment
        ? environment.what
        : gitConfig
          ? "the repository's .git/config"
          : envFile
            ? "an environment file"
            : secrets[0]!.what;
      secretsExposed = true;
    } else if (listing) what = "a directory listing";
    else if (metrics) what = "process metrics and internals";
    if (!what) return;
    if (environment) run.masker.addSecret(environment.value);
    for (const secret of secrets) run.masker.addSecret(secret.value);
    const assertions: ReproAssertion[] = [
      {
        kind: "status_in",
        step: "debug",
        values: [401, 403, 404],
        message: `${path} must not be served to anonymous callers`,
      },
    ];
    findings.push(
      buildFinding(run, {
        domain: "security",
        defectClass: "misconfiguration",
        title: `${path} exposes ${what} to anonymous callers`,
        summary: `GET ${pathOfUrl(exchange.request.url)} answered ${exchange.response?.status} without credentials, with ${what}. Values are masked in the evidence.`,
        impact: secretsExposed
          ? "Secrets of the deployment (database URLs, keys) are readable by anyone."
          : "Internals of the service help an attacker and leak operational data.",
        location: operation
          ? { kind: "endpoint", value: operationKey(operation) }
          : { kind: "endpoint", value: `GET ${path}` },
        severity: severityFor("misconfiguration", { secretsExposed, exposure: "internal" }),
        confidence: secretsExposed ? 0.9 : 0.8,
        discriminator: "debug-endpoint",
        exchanges: [{ label: "debug", exchange }],
        repro: {
          title: `${path} is not public`,
          steps: [{ name: "debug", method: "GET", path }],
          assertions,
        },
      }),
    );
  });
  return findings;
}

async function checkEntryHeaders(run: ProbeRun, stats: { entry_checked: boolean }): Promise<EnvelopeDraft[]> {
  const entry = run.target.profile?.ui?.entry ?? "/";
  const exchange = await get(run, undefined, entry, { accept: "text/html" });
  stats.entry_checked = true;
  if (!exchange?.response || !isSuccess(exchange) || !exchange.response.contentType.includes("text/html"))
    return [];
  const headers = exchange.response.headers;
  const csp = headers["content-security-policy"];
  const missing: string[] = [];
  if (!csp) missing.push("content-security-policy");
  if ((headers["x-content-type-options"] ?? "").toLowerCase() !== "nosniff")
    missing.push("x-content-type-options");
  if (!headers["x-frame-options"] && !/frame-ancestors/i.test(csp ?? "")) missing.push("x-frame-options");
  if (run.target.baseUrl.startsWith("https:") && !headers["strict-transport-security"])
    missing.push("strict-transport-security");
  if (missing.length === 0) return [];
  return [
    buildFinding(run, {
      domain: "security",
      defectClass: "misconfiguration",
      title: `The entry page is served without security headers (${missing.join(", ")})`,
      summary: `GET ${entry} (text/html) lacks ${missing.join(", ")}. Reported once for the target: the headers are usually set in one place for every page.`,
      impact:
        "Without them, injected scripts run unrestricted, the page can be framed for clickjacking, and content types can be sniffed.",
      location: { kind: "page", value: entry },
      related: [{ kind: "endpoint", value: `GET ${entry}` }],
      severity: severityFor("misconfiguration"),
      confidence: 0.8,
      discriminator: "security-headers",
      exchanges: [{ label: "entry", exchange }],
      repro: {
        title: `${entry} sends the basic security headers`,
        steps: [{ name: "entry", method: "GET", path: entry, headers: { accept: "text/html" } }],
        assertions: missing.map((header) => ({
          kind: "header_present" as const,
          step: "entry",
          header,
          message: `${header} must be set`,
        })),
      },
    }),
  ];
}

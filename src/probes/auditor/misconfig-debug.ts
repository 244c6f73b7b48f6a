import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { buildFinding } from "../evidence/finding.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import { toTemplateForm } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { DEBUG_SEGMENT } from "./exposure-scan.ts";
import { shapedSecretsIn } from "./exposure-secrets.ts";
import type { MappedPath } from "./misconfig-support.ts";
import {
  get,
  isHtmlAnswer,
  locationOf,
  looksLikeControl,
  MissingControl,
  mappedGetPaths,
} from "./misconfig-support.ts";
import { configurationSecrets, findEnvironment } from "./sensitive-patterns.ts";

// Debug, console, environment, configuration, actuator and metrics routes that answer anonymous callers
// with internals: environment values, configuration secrets, an interactive console, phpinfo, process
// internals. Routes come from the map (whatever the document says about them: a documented debug page is
// still a debug page) and a short list of well-known paths; the content decides, never the status.

const WELL_KNOWN_DEBUG = [
  "/debug",
  "/debug/vars",
  "/debug/config",
  "/debug/pprof/",
  "/_debug",
  "/__debug__/",
  "/env",
  "/config",
  "/config.json",
  "/api/config",
  "/api/debug",
  "/actuator",
  "/actuator/env",
  "/actuator/configprops",
  "/server-status",
  "/phpinfo.php",
  "/info.php",
  "/console",
  "/_profiler/",
];

const PAGE_SIGNATURES: ReadonlyArray<{ what: string; pattern: RegExp; secrets: boolean }> = [
  {
    what: "the Werkzeug interactive console",
    pattern: /Interactive Console[\s\S]*Werkzeug|Werkzeug[\s\S]*__debugger__/,
    secrets: true,
  },
  {
    what: "phpinfo()",
    pattern: /<title>phpinfo\(\)<\/title>|PHP License[\s\S]*Configuration File \(php\.ini\) Path/,
    secrets: true,
  },
  { what: "Apache server-status", pattern: /Apache Server Status for/, secrets: false },
  { what: "a framework profiler", pattern: /Symfony Profiler|id="djDebug"|sf-toolbar/, secrets: false },
  {
    what: "the Spring Boot environment",
    pattern: /"propertySources"\s*:|"activeProfiles"\s*:/,
    secrets: true,
  },
  {
    what: "Go runtime profiles",
    pattern: /<title>\/debug\/pprof\/<\/title>|goroutine\?debug=/,
    secrets: false,
  },
];

const INTERNAL_KEYS = [
  "heapused",
  "heaptotal",
  "memoryusage",
  "rss",
  "uptime",
  "pid",
  "versions",
  "cpuusage",
  "heap",
  "threads",
  "argv",
  "execpath",
  "cwd",
  "hostname",
  "memstats",
  "cmdline",
  "gc",
];

function debugCandidates(run: ProbeRun, guess: boolean): MappedPath[] {
  const candidates = new Map<string, MappedPath>();
  for (const mapped of mappedGetPaths(run))
    if (
      toTemplateForm(mapped.path)
        .split("/")
        .some((segment) => DEBUG_SEGMENT.test(segment)) &&
      !/^\/\.(?:env|git|svn|hg)/.test(mapped.path)
    )
      candidates.set(mapped.path, mapped);
  if (guess) for (const path of WELL_KNOWN_DEBUG) if (!candidates.has(path)) candidates.set(path, { path });
  return [...candidates.values()];
}

interface DebugVerdict {
  what: string;
  secrets: string[];
}

/** What a debug route's answer gives away; undefined for a plain status answer. */
export function judgeDebugAnswer(exchange: HttpExchange, mapped: boolean): DebugVerdict | undefined {
  const response = exchange.response;
  if (!response) return undefined;
  const body = response.body;
  for (const signature of PAGE_SIGNATURES)
    if (signature.pattern.test(body))
      return {
        what: signature.what,
        secrets: signature.secrets ? shapedSecretsIn(body).map((secret) => secret.value) : [],
      };
  const json = response.json;
  if (json !== undefined && typeof json === "object" && json !== null) {
    const environment = findEnvironment(json);
    if (environment) return { what: environment.what, secrets: [environment.value] };
    const settings = configurationSecrets(json);
    if (settings.length > 0)
      return {
        what: `configuration secrets (${[...new Set(settings.map((setting) => setting.path.split(".").pop()))].slice(0, 4).join(", ")})`,
        secrets: settings.map((setting) => setting.value),
      };
  }
  const shaped = shapedSecretsIn(body);
  if (shaped.length > 0 && !isHtmlAnswer(exchange))
    return { what: shaped[0]!.what, secrets: shaped.map((secret) => secret.value) };
  if (!isHtmlAnswer(exchange)) {
    const envLines = body.split(/\r?\n/).filter((line) => /^[A-Z][A-Z0-9_]+=\S/.test(line));
    const sensitive = envLines.filter((line) =>
      /SECRET|PASSWORD|TOKEN|KEY|DATABASE_URL/.test(line.split("=")[0]!),
    );
    if (envLines.length >= 3 && sensitive.length > 0)
      return {
        what: "environment variables",
        secrets: sensitive.map((line) => line.split("=").slice(1).join("=")),
      };
  }
  // Metrics and process internals only on routes the application itself has (a guess needs secrets).
  if (!mapped) return undefined;
  if (/^# (?:HELP|TYPE) \w+/m.test(body)) return { what: "process metrics", secrets: [] };
  if (json && typeof json === "object") {
    const keys =
      JSON.stringify(Object.keys(json as object)).toLowerCase() +
      JSON.stringify(json).toLowerCase().slice(0, 4000);
    if (INTERNAL_KEYS.filter((key) => keys.includes(`"${key}"`)).length >= 2)
      return { what: "process internals", secrets: [] };
  }
  return undefined;
}

export async function checkDebugRoutes(
  run: ProbeRun,
  guess: boolean,
  stats: { debug_checked: number },
): Promise<EnvelopeDraft[]> {
  const controls = new MissingControl(run);
  const findings: EnvelopeDraft[] = [];
  await mapConcurrent(debugCandidates(run, guess), 6, async (candidate) => {
    stats.debug_checked += 1;
    const exchange = await get(run, undefined, candidate.path, {
      accept: "application/json, text/html;q=0.9, */*;q=0.8",
    });
    if (!exchange?.response || !isSuccess(exchange)) return;
    const folder = candidate.path.slice(0, candidate.path.lastIndexOf("/") + 1) || "/";
    if (looksLikeControl(exchange, await controls.for(folder, ""))) return;
    const verdict = judgeDebugAnswer(
      exchange,
      candidate.operation !== undefined ||
        run.map.routes.some((route) => toTemplateForm(route.path) === candidate.path),
    );
    if (!verdict) return;
    for (const secret of verdict.secrets) run.masker.addSecret(secret);
    const secretsExposed = verdict.secrets.length > 0;
    findings.push(
      buildFinding(run, {
        domain: "security",
        defectClass: "misconfiguration",
        title: `${candidate.path} exposes ${verdict.what} to anonymous callers`,
        summary: `GET ${candidate.path} answered ${exchange.response.status} without credentials, with ${verdict.what}${secretsExposed ? ` (${verdict.secrets.length} secret value(s))` : ""}; a path that cannot exist answers differently. Values are masked in the evidence.`,
        impact: secretsExposed
          ? "Secrets of the deployment (signing keys, database and mail passwords) are readable by anyone."
          : "Internals of the service help an attacker and leak operational data.",
        location: locationOf(candidate),
        severity: secretsExposed ? "high" : "medium",
        confidence: secretsExposed ? 0.9 : 0.8,
        discriminator: "debug-endpoint",
        exchanges: [{ label: "debug", exchange }],
        repro: {
          title: `${candidate.path} is not public`,
          steps: [{ name: "debug", method: "GET", path: candidate.path }],
          assertions: [
            {
              kind: "status_in",
              step: "debug",
              values: [401, 403, 404],
              message: `${candidate.path} must not be served to anonymous callers`,
            },
          ],
        },
      }),
    );
  });
  return findings;
}

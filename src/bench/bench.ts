import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { inventoryByProvenance } from "../map/inventory.ts";
import { browsingTally } from "../probes/browser/browser-session.ts";
import { startRun } from "../run/start-run.ts";
import { runScoreCommand } from "../score/score-command.ts";
import { RunStore } from "../store/run-store.ts";
import { SystemMapStore } from "../store/system-map-store.ts";
import { loadTarget } from "../targets/load-target.ts";
import { parseBenchArgs } from "./bench-args.ts";
import { round } from "./bench-numbers.ts";
import { measureStaticInventory, writeSyntheticRepository } from "./inventory-bench.ts";
import { groupCpuSeconds, sampleDescendants } from "./process-sampler.ts";

// The benchmark: one builtin run against a target (the bundled demo by default) in a fresh store, with
// wall time per agent, requests sent (counted at fetch), requests per second, peak memory, findings and
// the score per domain. Targets are checked as ratios of this one run, never by the test suite.

const values = parseBenchArgs(
  "npm run bench --",
  {
    target: { type: "string", default: "demo" },
    mode: { type: "string", default: "nightly" },
    agents: { type: "string" },
    json: { type: "boolean", default: false },
    "inventory-lines": { type: "string", default: "50000" },
  },
  {
    target: "the target profile (a name under config/targets or a path)",
    mode: "the run mode",
    agents: "only these agents, comma-separated",
    json: "print the measurements as one JSON object",
    "inventory-lines": "lines of the generated repository whose static inventory is timed (0: skip)",
  },
);

const home = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-bench-"));
let requests = 0;
// Seconds to the answer's headers per `METHOD /path`: which requests the run's time went to.
const requestSeconds = new Map<string, { count: number; seconds: number }>();
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  requests += 1;
  const url = input instanceof Request ? input.url : String(input);
  const method = init?.method ?? (input instanceof Request ? input.method : "GET");
  const key = `${method.toUpperCase()} ${URL.canParse(url) ? new URL(url).pathname : url}`;
  const sentAt = performance.now();
  try {
    return await realFetch(input, init);
  } finally {
    const spent = requestSeconds.get(key) ?? { count: 0, seconds: 0 };
    spent.count += 1;
    spent.seconds += (performance.now() - sentAt) / 1000;
    requestSeconds.set(key, spent);
  }
};

// SQL statements the target ran, counted from its statement log when the profile names one.
const target = loadTarget(values.target!);
const statementLog =
  target.root && target.profile.database?.statement_log
    ? path.join(target.root, target.profile.database.statement_log.file)
    : undefined;
const countStatements = (): number => {
  if (!statementLog || !fs.existsSync(statementLog)) return 0;
  // Counted in chunks: the log grows across runs and must not inflate the memory being measured.
  const file = fs.openSync(statementLog, "r");
  const chunk = Buffer.alloc(1 << 20);
  let lines = 0;
  try {
    for (let read = fs.readSync(file, chunk); read > 0; read = fs.readSync(file, chunk)) {
      for (let index = 0; index < read; index += 1) if (chunk[index] === 10) lines += 1;
    }
  } finally {
    fs.closeSync(file);
  }
  return lines;
};
const statementsBefore = countStatements();

const started = performance.now();
const cpuBefore = process.cpuUsage();
// The managed target runs in a process group of its own (a shell and the server it starts); its CPU is
// sampled while it lives: once stopped, the server's time is not added to any process qaas waits for.
const pidFile = path.join(home, "environments", `${target.profile.name}.pid`);
let targetCpuSeconds: number | undefined;
// The browser (Chromium and its renderers) runs as qaas's child processes: its memory is sampled apart.
let browserPeakMib = 0;
// Each browser launched (the run closes it when no agent needs it), by its first process: its CPU so far.
const browserCpuSeconds = new Map<number, number>();
let childrenPeakMib = 0;
// qaas and every process it started (the managed target apart) at one instant: the machine's real peak,
// which the three separate peaks above would overstate (they need not coincide).
let togetherPeakMib = 0;
const sampler = setInterval(() => {
  const group = fs.existsSync(pidFile) ? Number(fs.readFileSync(pidFile, "utf8")) : Number.NaN;
  const seconds = Number.isInteger(group) ? groupCpuSeconds(group) : undefined;
  if (seconds !== undefined) targetCpuSeconds = Math.max(targetCpuSeconds ?? 0, seconds);
  const children = sampleDescendants(process.pid, Number.isInteger(group) ? group : undefined);
  browserPeakMib = Math.max(browserPeakMib, children.browser);
  for (const [browser, seconds] of children.browserCpu)
    browserCpuSeconds.set(browser, Math.max(browserCpuSeconds.get(browser) ?? 0, seconds));
  childrenPeakMib = Math.max(childrenPeakMib, children.other);
  const qaasMib = process.memoryUsage.rss() / (1024 * 1024);
  togetherPeakMib = Math.max(togetherPeakMib, qaasMib + children.browser + children.other);
}, 500);
const { runId, report } = await startRun({
  home,
  mode: values.mode!,
  target: values.target!,
  ...(values.agents ? { agents: values.agents.split(",").map((name) => name.trim().toUpperCase()) } : {}),
  json: values.json,
});
const wallSeconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
clearInterval(sampler);
const peakRssMib = process.resourceUsage().maxRSS / 1024;
const queries = statementLog ? Math.max(0, countStatements() - statementsBefore) : null;
// Pages the run's browser visited, per minute that at least one of its pages was open.
const browsingMinutes = browsingTally.browsingMs / 60_000;
const pagesPerMinute = browsingMinutes > 0 ? browsingTally.pages / browsingMinutes : null;

const entries = RunStore.open(home, runId).readLedger().entries;
const agentSeconds = new Map<string, number>();
const startedAt = new Map<string, number>();
let probingStart = Number.POSITIVE_INFINITY;
let probingEnd = 0;
for (const entry of entries) {
  const invocation = String(entry.data.invocation ?? "");
  const at = Date.parse(entry.at);
  if (entry.kind === "agent_started") {
    startedAt.set(invocation, at);
    probingStart = Math.min(probingStart, at);
  }
  if (entry.kind === "agent_finished" || entry.kind === "agent_failed") {
    const agent = String(entry.data.agent);
    agentSeconds.set(agent, (agentSeconds.get(agent) ?? 0) + (at - (startedAt.get(invocation) ?? at)) / 1000);
    probingEnd = Math.max(probingEnd, at);
  }
}
const probingSeconds = Math.max(0.001, (probingEnd - probingStart) / 1000);
// The run-wide measurement windows as the last tool that used them saw them: what measuring with the target
// to itself cost the other agents (they wait while a window drains and while it measures).
const windows = entries
  .map((entry) => (entry.data.stats as Record<string, unknown> | undefined)?.measurement_windows)
  .filter((report): report is Record<string, number> => typeof report === "object" && report !== null)
  .at(-1);

// The inventory MAPPER built during the run (by provenance, and how long MAPPER took), then a static read
// of the target's source and of a generated repository of the requested size.
const pinned = new SystemMapStore(home).latest(target.profile.name)?.map;
const syntheticLines = Number(values["inventory-lines"]);
const synthetic =
  syntheticLines > 0 ? fs.mkdtempSync(path.join(os.tmpdir(), "qaas-bench-repository-")) : undefined;
const inventory = {
  run: pinned
    ? {
        operations: pinned.operations.length,
        by_source: inventoryByProvenance(pinned.operations),
        mapper_seconds: round(agentSeconds.get("MAPPER") ?? 0),
      }
    : null,
  target_source: target.root
    ? await measureStaticInventory(target.root, target.goldenLedger ? [target.goldenLedger] : [])
    : null,
  synthetic: synthetic
    ? {
        routes_declared: writeSyntheticRepository(synthetic, syntheticLines),
        ...(await measureStaticInventory(synthetic)),
      }
    : null,
};
if (synthetic) fs.rmSync(synthetic, { recursive: true, force: true });

let score: ReturnType<typeof runScoreCommand>["scorecard"] | undefined;
try {
  score = runScoreCommand({ run: runId, home }).scorecard;
} catch (error) {
  process.stderr.write(`bench: no score (${error instanceof Error ? error.message : String(error)})\n`);
}

const result = {
  target: values.target,
  mode: values.mode,
  run_id: runId,
  home,
  wall_seconds: round(wallSeconds),
  agents_seconds: round(probingSeconds),
  per_agent_seconds: Object.fromEntries([...agentSeconds].map(([agent, seconds]) => [agent, round(seconds)])),
  cpu_seconds: round(cpuSeconds),
  target_cpu_seconds: targetCpuSeconds === undefined ? null : round(targetCpuSeconds),
  /** Chromium's processes (every browser launched, the generated tests' included), sampled every half second. */
  browser_cpu_seconds: round([...browserCpuSeconds.values()].reduce((sum, seconds) => sum + seconds, 0)),
  /** The share of the run's wall time qaas spent not computing: waiting on the target, sockets, timers. */
  waiting_share: round(Math.max(0, 1 - cpuSeconds / wallSeconds)),
  requests,
  requests_per_second: round(requests / probingSeconds),
  queries,
  peak_rss_mib: round(peakRssMib),
  /** Chromium's processes together (proportional set size), at their largest (sampled every half second). */
  browser_peak_pss_mib: round(browserPeakMib),
  /** Pages the run's browser visited (main-frame navigations), and per minute a page of it was open. */
  browser_pages: browsingTally.pages,
  /** Tabs opened for them (tabs are reused: see BrowserSession.borrowPage). */
  browser_tabs: browsingTally.tabs,
  browser_seconds: round(browsingTally.browsingMs / 1000),
  browser_pages_per_minute: pagesPerMinute === null ? null : round(pagesPerMinute),
  /** Other child processes together at their largest (PSS): generated tests, channel scripts, tool commands. */
  children_peak_pss_mib: round(childrenPeakMib),
  /** qaas's RSS plus its child processes' PSS, sampled together: the run's peak on the machine. */
  together_peak_mib: round(togetherPeakMib),
  measurement_windows: windows ?? null,
  /** The requests the run waited on longest, summed per `METHOD /path`. */
  slowest_requests: [...requestSeconds]
    .sort(([, a], [, b]) => b.seconds - a.seconds)
    .slice(0, 5)
    .map(([request, spent]) => ({ request, count: spent.count, seconds: round(spent.seconds) })),
  findings: report.findings.total,
  findings_by_domain: report.findings.by_domain,
  recall: score?.recall ?? null,
  precision: score?.precision ?? null,
  score_by_domain: score?.by_domain ?? null,
  inventory,
};

if (values.json) {
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} else {
  const lines = [
    `qaas bench — ${result.mode} on ${result.target} (run ${runId})`,
    `wall time            ${result.wall_seconds}s (agents ${result.agents_seconds}s)`,
    ...Object.entries(result.per_agent_seconds).map(
      ([agent, seconds]) => `  ${agent.padEnd(18)} ${seconds}s`,
    ),
    `CPU time             qaas ${result.cpu_seconds}s, target ${result.target_cpu_seconds ?? "—"}s, browser ${result.browser_cpu_seconds}s; qaas waited ${Math.round(result.waiting_share * 100)}% of the wall time`,
    `requests sent        ${requests} (${result.requests_per_second}/s while agents ran)`,
    `SQL statements run   ${queries ?? "— (the profile names no statement log)"}`,
    `peak memory          ${result.peak_rss_mib} MiB qaas (RSS), ${result.browser_peak_pss_mib} MiB browser, ${result.children_peak_pss_mib} MiB other child processes (PSS); ${result.together_peak_mib} MiB at once`,
    `browser              ${result.browser_pages} page(s) visited in ${result.browser_tabs} tab(s), in ${result.browser_seconds}s with a page open (${result.browser_pages_per_minute ?? "—"}/min), peak ${result.browser_peak_pss_mib} MiB (PSS)`,
    `measurement windows  ${windows ? `${windows.windows} opened: ${round((windows.held_ms ?? 0) / 1000)}s measuring, ${round((windows.drain_ms ?? 0) / 1000)}s waiting for others' requests to finish first` : "—"}`,
    "slowest requests     (seconds to the answer, summed)",
    ...result.slowest_requests.map(
      (spent) => `  ${spent.request.padEnd(40)} ${spent.count}× ${spent.seconds}s`,
    ),
    `findings             ${result.findings}`,
    `recall / precision   ${format(result.recall)} / ${format(result.precision)}`,
    ...Object.entries(result.score_by_domain ?? {}).map(
      ([domain, card]) =>
        `  ${domain.padEnd(14)} recall ${format(card.recall)}  precision ${format(card.precision)}  (${card.true_positives}/${card.defects})`,
    ),
    `inventory (run)      ${inventory.run ? `${inventory.run.operations} operations ${provenance(inventory.run.by_source)} in MAPPER's ${inventory.run.mapper_seconds}s` : "— (no system map saved)"}`,
    ...[
      ["inventory (source)", inventory.target_source],
      ["inventory (synthetic)", inventory.synthetic],
    ].map(([label, measure]) =>
      typeof measure === "object" && measure
        ? `${String(label).padEnd(20)} ${measure.operations} operations from ${measure.files} files, ${measure.lines} lines, in ${measure.seconds}s`
        : `${String(label).padEnd(20)} —`,
    ),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}

function provenance(bySource: Record<string, number>): string {
  const parts = Object.entries(bySource).map(([source, count]) => `${count} ${source}`);
  return parts.length > 0 ? `(${parts.join(", ")})` : "";
}

function format(value: number | null | undefined): string {
  return value === null || value === undefined ? "—" : value.toFixed(2);
}

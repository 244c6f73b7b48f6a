import fs from "node:fs";

// What the benchmark reads of other processes on Linux (/proc): the CPU time of the managed target's
// process group, and the memory of the browser qaas drives (its Chromium processes are qaas's descendants).

interface ProcessStat {
  pid: number;
  ppid: number;
  group: number;
  /** User + system CPU, in clock ticks. */
  ticks: number;
  /** The same plus that of its children that ended and were waited for. */
  treeTicks: number;
  /** Resident pages. */
  rssPages: number;
  /** The executable's name (comm), e.g. `chromium`, `node`. */
  name: string;
}

function processes(): ProcessStat[] {
  const found: ProcessStat[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after the command name (which may hold spaces): state, ppid, pgrp, … utime, stime (14, 15),
      // … rss (24).
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      found.push({
        name: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")),
        pid: Number(entry),
        ppid: Number(fields[1]),
        group: Number(fields[2]),
        ticks: Number(fields[11]) + Number(fields[12]),
        treeTicks: Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]),
        rssPages: Number(fields[21]),
      });
    } catch {
      // The process ended while the list was read.
    }
  }
  return found;
}

/** The process's proportional set size in pages, or its resident size where the kernel does not say. */
function proportionalPages(process: ProcessStat): number {
  try {
    const rollup = fs.readFileSync(`/proc/${process.pid}/smaps_rollup`, "utf8");
    const kib = /^Pss:\s+(\d+) kB/m.exec(rollup)?.[1];
    if (kib !== undefined) return Number(kib) / 4;
  } catch {
    // Ended meanwhile, or not readable: its resident size stands in.
  }
  return process.rssPages;
}

/** CPU seconds the live processes of process group `group` have used, if any is alive. */
export function groupCpuSeconds(group: number): number | undefined {
  const members = processes().filter((process) => process.group === group);
  return members.length > 0 ? members.reduce((sum, process) => sum + process.ticks, 0) / 100 : undefined;
}

/**
 * Memory (MiB) of the descendants of `root` outside process group `exclude` (the managed target, which
 * qaas also starts): the browser's processes apart from the rest (generated tests, scripts); and the CPU
 * seconds of each browser launched. Each process counts its proportional share (PSS): Chromium's processes
 * share most of their pages, and summing their resident sizes would count those pages once per process.
 */
export function sampleDescendants(
  root: number,
  exclude?: number,
): { browser: number; other: number; browserCpu: Map<number, number> } {
  const all = processes();
  const children = new Map<number, ProcessStat[]>();
  for (const process of all) children.set(process.ppid, [...(children.get(process.ppid) ?? []), process]);
  const pages = { browser: 0, other: 0 };
  // Per launched browser (its first process), the CPU seconds of its processes so far: live ones and those
  // that ended (a renderer's time moves to the process that waited for it), so it only grows.
  const browserCpu = new Map<number, number>();
  const queue = (children.get(root) ?? []).map((process) => ({
    process,
    browserRoot: undefined as number | undefined,
  }));
  while (queue.length > 0) {
    const { process, browserRoot: above } = queue.shift()!;
    if (process.group === exclude) continue;
    // Chromium's helpers (zygote, renderers, GPU) carry other names; they count as the browser's.
    const browserRoot = above ?? (/chrom/i.test(process.name) ? process.pid : undefined);
    pages[browserRoot !== undefined ? "browser" : "other"] += proportionalPages(process);
    if (browserRoot !== undefined)
      browserCpu.set(browserRoot, (browserCpu.get(browserRoot) ?? 0) + process.treeTicks / 100);
    queue.push(...(children.get(process.pid) ?? []).map((child) => ({ process: child, browserRoot })));
  }
  const mib = (count: number) => (count * 4096) / (1024 * 1024);
  return { browser: mib(pages.browser), other: mib(pages.other), browserCpu };
}

import fs from "node:fs";

// What the benchmark reads of other processes on Linux (/proc): the CPU time of the managed target's
// process group, and the memory of the browser qaas drives (its Chromium processes are qaas's descendants).

interface ProcessStat {
  pid: number;
  ppid: number;
  group: number;
  /** User + system CPU, in clock ticks. */
  ticks: number;
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
 * qaas also starts): the browser's processes apart from the rest (generated tests, scripts). Each process
 * counts its proportional share (PSS): Chromium's processes share most of their pages, and summing their
 * resident sizes would count those pages once per process.
 */
export function descendantsMemoryMib(root: number, exclude?: number): { browser: number; other: number } {
  const all = processes();
  const children = new Map<number, ProcessStat[]>();
  for (const process of all) children.set(process.ppid, [...(children.get(process.ppid) ?? []), process]);
  const pages = { browser: 0, other: 0 };
  const queue = (children.get(root) ?? []).map((process) => ({ process, inBrowser: false }));
  while (queue.length > 0) {
    const { process, inBrowser } = queue.shift()!;
    if (process.group === exclude) continue;
    // Chromium's helpers (zygote, renderers, GPU) carry other names; they count as the browser's.
    const browser = inBrowser || /chrom/i.test(process.name);
    pages[browser ? "browser" : "other"] += proportionalPages(process);
    queue.push(...(children.get(process.pid) ?? []).map((child) => ({ process: child, inBrowser: browser })));
  }
  const mib = (count: number) => (count * 4096) / (1024 * 1024);
  return { browser: mib(pages.browser), other: mib(pages.other) };
}

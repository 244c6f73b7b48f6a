import type { ServiceContext, SessionUser } from "./context.ts";
import { notFound } from "./errors.ts";

export interface ProjectForecast {
  project_id: number;
  key: string;
  open_tasks: number;
  remaining_hours: number;
  p50_days: number;
  p85_days: number;
  p95_days: number;
}

const SIMULATIONS = 40_000;
const STEP_HOURS = 1 / 60;
const HOURS_PER_DAY = 6;

function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** One simulated delivery: every open task takes its estimate times a log-normal surprise factor. */
function simulateDays(estimates: number[], random: () => number): number {
  let day = 0;
  let capacity = 0;
  for (const estimate of estimates) {
    const u1 = Math.max(random(), 1e-9);
    const u2 = random();
    const normal = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    let work = estimate * Math.exp(0.45 * normal);
    while (work > 0) {
      if (capacity <= 0) {
        day++;
        capacity = HOURS_PER_DAY * (0.6 + random() * 0.5);
      }
      const spent = Math.min(work, capacity, STEP_HOURS);
      work -= spent;
      capacity -= spent;
    }
  }
  return day;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
}

export function forecast(ctx: ServiceContext, user: SessionUser, projectId?: number): ProjectForecast[] {
  const projects = (
    projectId
      ? ctx.db
          .prepare("SELECT id, key FROM projects WHERE id = ? AND tenant_id = ?")
          .all(projectId, user.tenantId)
      : ctx.db
          .prepare("SELECT id, key FROM projects WHERE tenant_id = ? AND status != 'archived'")
          .all(user.tenantId)
  ) as { id: number; key: string }[];
  if (projectId && projects.length === 0) throw notFound("Project");
  const random = prng(user.tenantId * 7919);
  return projects.map((project) => {
    const estimates = (
      ctx.db
        .prepare("SELECT estimate_hours FROM tasks WHERE project_id = ? AND status != 'done'")
        .all(project.id) as { estimate_hours: number | null }[]
    ).map((row) => row.estimate_hours ?? 4);
    const samples: number[] = [];
    for (let run = 0; run < SIMULATIONS; run++) samples.push(simulateDays(estimates, random));
    samples.sort((a, b) => a - b);
    return {
      project_id: project.id,
      key: project.key,
      open_tasks: estimates.length,
      remaining_hours: estimates.reduce((sum, hours) => sum + hours, 0),
      p50_days: percentile(samples, 0.5),
      p85_days: percentile(samples, 0.85),
      p95_days: percentile(samples, 0.95),
    };
  });
}

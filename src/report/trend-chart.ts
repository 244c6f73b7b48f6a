import { SEVERITIES } from "../envelope/taxonomy.ts";
import { escapeHtml } from "./html-text.ts";
import type { TrendPoint } from "./run-history.ts";

// Findings per run by severity across the runs of one target, as stacked bars in inline SVG (no script,
// no fonts fetched, no external reference), so the chart survives being mailed or attached to a ticket.

export const SEVERITY_COLOURS: Record<string, string> = {
  critical: "#7f1d1d",
  high: "#dc2626",
  medium: "#f59e0b",
  low: "#60a5fa",
};

const WIDTH = 720;
const HEIGHT = 220;
const MARGIN = { top: 16, right: 16, bottom: 40, left: 40 };

export function renderTrendChart(points: readonly TrendPoint[]): string {
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const totals = points.map((point) => SEVERITIES.reduce((sum, severity) => sum + point.counts[severity], 0));
  const highest = Math.max(1, ...totals);
  const slot = plotWidth / Math.max(1, points.length);
  const barWidth = Math.max(4, Math.min(40, slot * 0.6));
  const y = (value: number) => MARGIN.top + plotHeight - (value / highest) * plotHeight;
  const parts: string[] = [];
  for (const tick of ticks(highest)) {
    parts.push(
      `<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${y(tick).toFixed(1)}" y2="${y(tick).toFixed(1)}" stroke="#e5e7eb"/>`,
      `<text x="${MARGIN.left - 6}" y="${(y(tick) + 4).toFixed(1)}" text-anchor="end" font-size="11" fill="#4b5563">${tick}</text>`,
    );
  }
  points.forEach((point, index) => {
    const x = MARGIN.left + slot * index + (slot - barWidth) / 2;
    let base = 0;
    const label = `${point.runId}: ${SEVERITIES.map((severity) => `${point.counts[severity]} ${severity}`).join(", ")}`;
    parts.push(`<g><title>${escapeHtml(label)}</title>`);
    // Least severe at the bottom, so the dangerous part of each bar sits on top where the eye lands.
    for (const severity of [...SEVERITIES].reverse()) {
      const count = point.counts[severity];
      if (count === 0) continue;
      const top = y(base + count);
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${top.toFixed(1)}" width="${barWidth.toFixed(1)}" height="${(y(base) - top).toFixed(1)}" fill="${SEVERITY_COLOURS[severity]}"/>`,
      );
      base += count;
    }
    parts.push(
      `<text x="${(x + barWidth / 2).toFixed(1)}" y="${(y(base) - 3).toFixed(1)}" text-anchor="middle" font-size="10" fill="#111827">${totals[index]}</text>`,
      "</g>",
    );
    if (points.length <= 12 || index % Math.ceil(points.length / 12) === 0 || index === points.length - 1) {
      parts.push(
        `<text x="${(x + barWidth / 2).toFixed(1)}" y="${HEIGHT - MARGIN.bottom + 14}" text-anchor="middle" font-size="10" fill="#4b5563">${escapeHtml(shortDate(point.started))}</text>`,
      );
    }
  });
  const legend = SEVERITIES.map(
    (severity, index) =>
      `<rect x="${MARGIN.left + index * 90}" y="${HEIGHT - 14}" width="10" height="10" fill="${SEVERITY_COLOURS[severity]}"/><text x="${MARGIN.left + index * 90 + 14}" y="${HEIGHT - 5}" font-size="11" fill="#111827">${severity}</text>`,
  ).join("");
  return (
    `<svg role="img" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" aria-label="findings per run by severity">` +
    `<line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${MARGIN.top + plotHeight}" stroke="#9ca3af"/>` +
    parts.join("") +
    legend +
    "</svg>"
  );
}

function ticks(highest: number): number[] {
  const step = Math.max(1, Math.ceil(highest / 4));
  const values: number[] = [];
  for (let value = 0; value <= highest; value += step) values.push(value);
  return values;
}

function shortDate(iso: string): string {
  const time = Date.parse(iso);
  return Number.isNaN(time) ? "?" : new Date(time).toISOString().slice(5, 16).replace("T", " ");
}

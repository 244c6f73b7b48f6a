import type { SystemMap } from "../../map/system-map.ts";

// The charters of a bug bash: the ones the person gave (`--charter`, several times), else charters derived
// from the system map, one per persona × area of the application. An area is the first segment of the
// mapped page paths, so the derivation reads the map's shape and never the names of a particular app.

export interface Charter {
  /** C1, C2, … in the order the sessions are started. */
  id: string;
  persona: string;
  text: string;
  origin: "given" | "derived";
}

/** `as <persona>: <charter>` picks the persona; without the prefix the charter runs anonymously. */
export function parseGivenCharter(text: string, index: number, personas: readonly string[]): Charter {
  const prefixed = /^\s*as\s+([\w.@-]+)\s*:\s*(.+)$/is.exec(text);
  const persona = prefixed && personas.includes(prefixed[1]!) ? prefixed[1]! : "anonymous";
  const body = prefixed && persona !== "anonymous" ? prefixed[2]!.trim() : text.trim();
  return { id: `C${index + 1}`, persona, text: body, origin: "given" };
}

interface Area {
  area: string;
  /** Shortest first: the area's own page when it has one, else its simplest page. */
  paths: string[];
  roles: string[];
  /** Pages of the area with a form that writes (POST and the like), with the roles that reached each. */
  forms: Array<{ path: string; roles: string[] }>;
}

/** Pages of a map grouped by area (the first path segment; "/" is the entry's own area), path templates left out. */
export function areasOf(map: SystemMap | undefined): Area[] {
  const areas = new Map<string, { paths: string[]; roles: Set<string>; forms: Area["forms"] }>();
  for (const page of map?.pages ?? []) {
    // A page the crawl saw missing or refused is no place to send a charter; a failing one is.
    const status = page.status ?? 200;
    if (status >= 400 && status < 500) continue;
    if (/[{}]/.test(page.path)) continue;
    const segment = page.path.split(/[?#]/)[0]!.split("/").filter(Boolean)[0];
    if (segment && /\.\w{2,4}$/.test(segment)) continue;
    const area = segment ? `/${segment}` : "/";
    const entry = areas.get(area) ?? { paths: [], roles: new Set<string>(), forms: [] };
    entry.paths.push(page.path);
    for (const role of page.roles ?? ["anonymous"]) entry.roles.add(role);
    // A form with something to type in: a layout's sign-out button is a form too, and no journey.
    const typed = (form: (typeof page.forms)[number]) =>
      (form.inputs ?? []).some((input) => !/^(hidden|submit|button|checkbox|radio|file)$/i.test(input.type));
    if (page.forms.some((form) => !/^get$/i.test(form.method) && !form.scripted && typed(form)))
      entry.forms.push({ path: page.path, roles: page.roles ?? ["anonymous"] });
    areas.set(area, entry);
  }
  return [...areas]
    .map(([area, entry]) => ({
      area,
      paths: [...new Set(entry.paths)].sort((a, b) => a.length - b.length || a.localeCompare(b)),
      roles: [...entry.roles].sort(),
      forms: entry.forms,
    }))
    .sort((a, b) => b.paths.length - a.paths.length || a.area.localeCompare(b.area));
}

/**
 * Charters per persona, personas taking turns so a small cap still covers several of them: first each
 * persona follows the entry page's links (a crawl that reports pages failing to render), then one charter
 * per area it reaches, broadest areas first — completing the area's form when it has one, else reaching it.
 */
export function deriveCharters(
  map: SystemMap | undefined,
  personas: readonly string[],
  max: number,
): Charter[] {
  const areas = areasOf(map).filter((area) => area.area !== "/");
  const byPersona = personas.map((persona) => [
    { persona, text: "open the entry page and follow the links it offers" },
    ...areas
      .filter((area) => area.roles.includes(persona))
      .map((area) => ({ persona, text: charterOf(area, persona) })),
  ]);
  // Personas the map never saw (none signed in) still get the entry walk; only the anonymous one is sure.
  const seen = byPersona.filter((list, index) => index === 0 || list.length > 1);
  const pairs: Array<{ persona: string; text: string }> = [];
  for (let round = 0; pairs.length < max; round += 1) {
    const row = seen.map((list) => list[round]).filter((pair) => pair !== undefined);
    if (row.length === 0) break;
    pairs.push(...row.slice(0, max - pairs.length));
  }
  return pairs.map((pair, index) => ({ id: `C${index + 1}`, ...pair, origin: "derived" }));
}

/** Completing the area's form where the persona reaches one, else reaching the area's simplest page. */
function charterOf(area: Area, persona: string): string {
  const form = area.forms.find((candidate) => candidate.roles.includes(persona));
  if (form) {
    const subject = area.area.slice(1).replace(/[-_]+/g, " ").replace(/s$/, "") || "entry";
    return `open the entry page and find a way to ${form.path}, then fill the ${subject} form`;
  }
  return `open the entry page and find a way to ${area.paths[0]}`;
}

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

/** Pages of a map grouped by area (the first path segment; "/" is the entry's own area), path templates left out. */
export function areasOf(
  map: SystemMap | undefined,
): Array<{ area: string; paths: string[]; roles: string[] }> {
  const areas = new Map<string, { paths: string[]; roles: Set<string> }>();
  for (const page of map?.pages ?? []) {
    // A page the crawl saw missing or refused is no place to send a charter; a failing one is.
    const status = page.status ?? 200;
    if (status >= 400 && status < 500) continue;
    if (/[{}]/.test(page.path)) continue;
    const segment = page.path.split(/[?#]/)[0]!.split("/").filter(Boolean)[0];
    // A path parameter is not an area of its own (`/{id}`), nor is a file.
    if (segment && /\.\w{2,4}$/.test(segment)) continue;
    const area = segment ? `/${segment}` : "/";
    const entry = areas.get(area) ?? { paths: [], roles: new Set<string>() };
    entry.paths.push(page.path);
    for (const role of page.roles ?? ["anonymous"]) entry.roles.add(role);
    areas.set(area, entry);
  }
  return [...areas]
    .map(([area, entry]) => ({
      area,
      // Shortest first: the area's own page when it has one, else its simplest page.
      paths: [...new Set(entry.paths)].sort((a, b) => a.length - b.length || a.localeCompare(b)),
      roles: [...entry.roles].sort(),
    }))
    .sort((a, b) => b.paths.length - a.paths.length || a.area.localeCompare(b.area));
}

/**
 * One charter per persona × area, broadest areas first, personas taking turns so a small cap still covers
 * several of them; the entry area becomes "follow the links", every other area "find a way to it".
 */
export function deriveCharters(
  map: SystemMap | undefined,
  personas: readonly string[],
  max: number,
): Charter[] {
  const pairs: Array<{ persona: string; area: string }> = [];
  const areas = areasOf(map);
  const byPersona = personas.map((persona) =>
    areas
      .filter((area) => area.roles.includes(persona))
      .map((area) => ({ persona, area: area.area === "/" ? "/" : area.paths[0]! })),
  );
  for (let round = 0; pairs.length < max; round += 1) {
    const row = byPersona.map((list) => list[round]).filter((pair) => pair !== undefined);
    if (row.length === 0) break;
    pairs.push(...row.slice(0, max - pairs.length));
  }
  if (pairs.length === 0) pairs.push({ persona: "anonymous", area: "/" });
  return pairs.map((pair, index) => ({
    id: `C${index + 1}`,
    persona: pair.persona,
    text:
      pair.area === "/"
        ? "open the entry page and follow the links it offers"
        : `open the entry page and find a way to ${pair.area}`,
    origin: "derived",
  }));
}

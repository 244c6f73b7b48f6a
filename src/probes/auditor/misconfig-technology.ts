import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { LocationKind } from "../../envelope/taxonomy.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { HttpExchange } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { MappedPath } from "./misconfig-support.ts";
import { getMapped, locationOf } from "./misconfig-support.ts";

// Headers a framework adds by default to name itself (Express, PHP, ASP.NET, Next.js, Servlet containers):
// they tell an attacker which advisories to try and serve no client. Each is one switch in the application
// (`app.disable("x-powered-by")`, `expose_php = Off`, `enableVersionHeader`), so one finding per header,
// wherever it was seen. `Server` is left alone: it is the web server's, often a proxy's, and names no
// application framework a client could not guess.

const DISCLOSING_HEADERS = ["x-powered-by", "x-aspnet-version", "x-aspnetmvc-version"] as const;
const MAX_RELATED = 10;

export interface Answer {
  target: MappedPath;
  exchange: HttpExchange;
  entry: boolean;
}

/** The disclosing headers an answer carries, with their values. */
export function disclosedTechnology(exchange: HttpExchange): Array<{ header: string; value: string }> {
  const headers = exchange.response?.headers ?? {};
  return DISCLOSING_HEADERS.flatMap((header) => {
    const value = headers[header]?.trim();
    return value ? [{ header, value }] : [];
  });
}

/**
 * One finding per disclosing header among `answers` (entry page first), each confirmed by asking for the
 * first place again: a header one answer happened to carry (a proxy's error page) is not the application's.
 */
export async function technologyDisclosures(run: ProbeRun, answers: Answer[]): Promise<EnvelopeDraft[]> {
  const byHeader = new Map<string, Answer[]>();
  const ordered = [...answers].sort(
    (a, b) => Number(b.entry) - Number(a.entry) || a.target.path.localeCompare(b.target.path),
  );
  for (const answer of ordered)
    for (const { header } of disclosedTechnology(answer.exchange))
      byHeader.set(header, [...(byHeader.get(header) ?? []), answer]);
  const findings: EnvelopeDraft[] = [];
  for (const [header, places] of byHeader) {
    const first = places[0]!;
    const again = await getMapped(run, first.exchange.user, first.target);
    const value = again && disclosedTechnology(again).find((found) => found.header === header)?.value;
    if (!again || !value) continue;
    findings.push(findingOf(run, { header, value, places, again, checked: answers.length }));
  }
  return findings;
}

interface Disclosure {
  header: string;
  value: string;
  places: Answer[];
  again: HttpExchange;
  checked: number;
}

function findingOf(run: ProbeRun, { header, value, places, again, checked }: Disclosure): EnvelopeDraft {
  const first = places[0]!;
  const path = first.target.path;
  const others = places.slice(1, MAX_RELATED + 1);
  const location: { kind: LocationKind; value: string } =
    first.entry && !first.target.operation ? { kind: "page", value: path } : locationOf(first.target);
  const spread =
    places.length === checked
      ? `every answer checked carries it (${checked})`
      : `${places.length} of ${checked} answers checked carry it`;
  return buildFinding(run, {
    domain: "security",
    defectClass: "misconfiguration",
    title: `${places.length > 1 ? `${path} and ${places.length - 1} other place(s) name` : `${path} names`} the server's technology in ${header}: ${value}`,
    summary: `GET ${path} answers with \`${header}: ${value}\`; ${spread}${others.length > 0 ? ` (also ${others.map((place) => place.target.path).join(", ")})` : ""}. The header is the framework's default and serves no client.`,
    impact:
      "It tells an attacker which framework and often which version runs the application, so known advisories can be tried first.",
    location,
    related: others.map((place) => locationOf(place.target)),
    severity: "low",
    confidence: 0.9,
    discriminator: `technology-header:${header}`,
    exchanges: [
      { label: "answer", exchange: first.exchange },
      { label: "again", exchange: again },
    ],
    repro: {
      title: `${path} does not name the server's technology`,
      steps: [
        { name: "answer", ...(first.exchange.user ? { as: first.exchange.user } : {}), method: "GET", path },
      ],
      assertions: [
        {
          kind: "header_not_matches",
          step: "answer",
          header,
          pattern: "\\S",
          message: `${header} must not be sent`,
        },
      ],
    },
  });
}

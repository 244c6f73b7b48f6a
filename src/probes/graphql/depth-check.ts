import type {
  IntrospectionField,
  IntrospectionInputValue,
  IntrospectionSchema,
  IntrospectionType,
} from "graphql";
import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";
import { endpointLocation, type GraphqlEndpoint, methodsFor, sendFor, stepOf } from "./finding-support.ts";
import { askGraphql, type GraphqlAsked } from "./graphql-transport.ts";
import { fieldsOf, isRequiredInput, namedTypeOf, rootTypeNames, typeIndex } from "./type-refs.ts";

// Unbounded query depth: a circular query (`pastes { owner { pastes { owner … } } }`) accepted however
// deep it goes lets one request multiply the server's work. Kept small and bounded: lists are asked for
// one item where the field takes a limit, leaves are `__typename`, the first query is 4 levels deep, and
// the deeper confirmation is only sent when the first answer projects it to a few hundred objects at most.

const FIRST_DEPTH = 4;
const MIN_CONFIRM_DEPTH = 7;
const MAX_CONFIRM_DEPTH = 10;
const MAX_PROJECTED_OBJECTS = 300;
const CANDIDATE_ROOTS = 3;
// Near the top of a 32-bit id range: no seeded or created row has it, and every Int argument accepts it.
const MISSING_ID = 2147480001;
const ID_ARGUMENT = /^(id|.+_id|.+Id)$/;
const LIMIT_ARGUMENT = /^(first|last|limit|take|size|count|top|per_?page|page_?size|max|max_?results)$/i;

interface Step {
  field: IntrospectionField;
  to: string;
}

export interface CircularPath {
  root: IntrospectionField;
  /** Edges from the root's type to where the cycle starts, then the cycle's edges (repeated as needed). */
  prefix: Step[];
  cycle: Step[];
}

export async function checkQueryDepth(
  run: ProbeRun,
  endpoint: GraphqlEndpoint,
): Promise<EnvelopeDraft | undefined> {
  if (!endpoint.schema) return undefined;
  const send = sendFor(run, undefined);
  for (const path of circularPaths(endpoint.schema).slice(0, CANDIDATE_ROOTS)) {
    const first = await ask(send, endpoint.url, circularQuery(path, FIRST_DEPTH), methodsFor(run));
    if (!first) continue;
    const depth = confirmDepth(objectsPerLevel(first.answer?.data, FIRST_DEPTH));
    // Too many objects per level to go deeper safely: a root that matches nothing may still prove it.
    if (depth === undefined) break;
    const second = await ask(send, endpoint.url, circularQuery(path, depth), methodsFor(run));
    if (!second) return undefined;
    return depthFinding(run, endpoint, path, depth, [first, second]);
  }
  return checkDepthOnEmptyRoot(run, endpoint, endpoint.schema, send);
}

/**
 * A depth limit judges the query document, before any resolver runs: a circular query rooted at an id
 * that cannot exist loads nothing at any depth, so it can go as deep as the confirmation needs. Answered
 * without an error at both depths, with the root empty both times, the limit is missing.
 */
async function checkDepthOnEmptyRoot(
  run: ProbeRun,
  endpoint: GraphqlEndpoint,
  schema: IntrospectionSchema,
  send: ReturnType<typeof sendFor>,
): Promise<EnvelopeDraft | undefined> {
  for (const { path, argument } of idRootedPaths(schema).slice(0, CANDIDATE_ROOTS)) {
    const rootArguments = `(${argument.name}: ${namedTypeOf(argument.type) === "ID" ? `"${MISSING_ID}"` : MISSING_ID})`;
    const asked: GraphqlAsked[] = [];
    for (const depth of [FIRST_DEPTH, MAX_CONFIRM_DEPTH]) {
      const answer = await ask(
        send,
        endpoint.url,
        circularQuery(path, depth, rootArguments),
        methodsFor(run),
      );
      if (!answer || !isEmptyRoot(answer.answer?.data, path.root.name)) break;
      asked.push(answer);
    }
    const [first, second] = asked;
    if (first && second)
      return depthFinding(run, endpoint, path, MAX_CONFIRM_DEPTH, [first, second], rootArguments);
  }
  return undefined;
}

function depthFinding(
  run: ProbeRun,
  endpoint: GraphqlEndpoint,
  path: CircularPath,
  depth: number,
  [first, second]: [GraphqlAsked, GraphqlAsked],
  rootArguments?: string,
): EnvelopeDraft {
  const chain = fieldChain(path, depth).join(" → ");
  const how = rootArguments
    ? `Both were rooted at ${path.root.name}${rootArguments}, an id that matches nothing, so no object was loaded: the server validated the depth and found nothing to refuse.`
    : "Lists were asked for one item where the field takes a limit and every leaf was __typename.";
  return buildFinding(run, {
    domain: "security",
    defectClass: "misconfiguration",
    title: `GraphQL endpoint ${endpoint.path} accepts circular queries ${depth} levels deep (no depth limit)`,
    summary: `A circular query ${FIRST_DEPTH} levels deep was executed at ${endpoint.path}, and so was the same cycle ${depth} levels deep (${chain}), without any error: no depth limit applies. ${how}`,
    impact:
      "Each extra level of a circular query multiplies the objects the server loads: a single small request can exhaust its database and CPU (denial of service).",
    location: endpointLocation(endpoint.path),
    severity: severityFor("misconfiguration"),
    confidence: 0.8,
    discriminator: "graphql-depth",
    exchanges: [
      { label: `depth-${FIRST_DEPTH}`, exchange: first.exchange },
      { label: `depth-${depth}`, exchange: second.exchange },
    ],
    repro: {
      title: `GraphQL endpoint ${endpoint.path} refuses a circular query ${depth} levels deep`,
      steps: [stepOf("deep", second.exchange)],
      assertions: [
        {
          kind: "json_has",
          step: "deep",
          path: "errors",
          message: `a query ${depth} levels deep must be refused by a depth limit`,
        },
      ],
    },
    suggestedFixArea: "the GraphQL server's validation rules (add a query depth or cost limit)",
  });
}

function isEmptyRoot(data: unknown, field: string): boolean {
  const value = (data as Record<string, unknown> | undefined)?.[field];
  return value === null || (Array.isArray(value) && value.length === 0);
}

async function ask(
  send: ReturnType<typeof sendFor>,
  url: string,
  query: string,
  methods: ReturnType<typeof methodsFor>,
): Promise<GraphqlAsked | undefined> {
  const asked = await askGraphql(send, url, { query, operationName: "QaasDepth" }, methods);
  const data = asked?.answer?.data;
  return asked?.answer && !asked.answer.failed && data && typeof data === "object" ? asked : undefined;
}

/**
 * The deepest confirmation the first answer allows: objects per level grow by the worst ratio seen; an
 * answer whose deep levels are empty was still validated at that depth, so going deeper costs nothing.
 */
export function confirmDepth(perLevel: readonly number[]): number | undefined {
  let growth = 1;
  for (let level = 1; level < perLevel.length; level += 1) {
    const before = perLevel[level - 1] ?? 0;
    const after = perLevel[level] ?? 0;
    if (before > 0) growth = Math.max(growth, after / before);
  }
  let total = perLevel.reduce((sum, count) => sum + count, 0);
  let current = perLevel.at(-1) ?? 0;
  let depth = perLevel.length;
  while (depth < MAX_CONFIRM_DEPTH) {
    current *= growth;
    if (total + current > MAX_PROJECTED_OBJECTS) break;
    total += current;
    depth += 1;
  }
  return depth >= MIN_CONFIRM_DEPTH ? depth : undefined;
}

/** Objects answered at each nesting level of `data` (level 1: what the root field answered). */
export function objectsPerLevel(data: unknown, depth: number): number[] {
  const counts = Array.from({ length: depth }, () => 0);
  const walk = (value: unknown, level: number) => {
    if (level >= depth || value === null || value === undefined) return;
    if (Array.isArray(value)) {
      for (const item of value) walk(item, level);
      return;
    }
    if (typeof value !== "object") return;
    counts[level] = (counts[level] ?? 0) + 1;
    for (const child of Object.values(value as Record<string, unknown>)) walk(child, level + 1);
  };
  for (const root of Object.values((data ?? {}) as Record<string, unknown>)) walk(root, 0);
  return counts;
}

/** Root query fields (no required argument) from whose type a cycle of object fields can be walked. */
export function circularPaths(schema: IntrospectionSchema): CircularPath[] {
  const types = typeIndex(schema);
  const root = rootTypeNames(schema).query;
  const paths: CircularPath[] = [];
  for (const field of fieldsOf(root ? types.get(root) : undefined)) {
    if (field.name.startsWith("__") || !usable(field)) continue;
    const start = namedTypeOf(field.type);
    if (!start || !isComposite(types.get(start))) continue;
    const found = shortestCycle(start, types);
    if (found) paths.push({ root: field, ...found });
  }
  return paths.sort((a, b) => a.prefix.length + a.cycle.length - (b.prefix.length + b.cycle.length));
}

/** Root query fields taking an Int or ID id (and no other required input) from whose type a cycle can be walked. */
export function idRootedPaths(
  schema: IntrospectionSchema,
): Array<{ path: CircularPath; argument: IntrospectionInputValue }> {
  const types = typeIndex(schema);
  const root = rootTypeNames(schema).query;
  const paths: Array<{ path: CircularPath; argument: IntrospectionInputValue }> = [];
  for (const field of fieldsOf(root ? types.get(root) : undefined)) {
    if (field.name.startsWith("__")) continue;
    const argument = (field.args ?? []).find(
      (candidate) =>
        ID_ARGUMENT.test(candidate.name) && ["Int", "ID"].includes(namedTypeOf(candidate.type) ?? ""),
    );
    if (!argument || (field.args ?? []).some((other) => other !== argument && isRequiredInput(other)))
      continue;
    const start = namedTypeOf(field.type);
    if (!start || !isComposite(types.get(start))) continue;
    const found = shortestCycle(start, types);
    if (found) paths.push({ path: { root: field, ...found }, argument });
  }
  return paths.sort(
    (a, b) => a.path.prefix.length + a.path.cycle.length - (b.path.prefix.length + b.path.cycle.length),
  );
}

function shortestCycle(
  start: string,
  types: ReadonlyMap<string, IntrospectionType>,
): { prefix: Step[]; cycle: Step[] } | undefined {
  const queue: Array<{ at: string; visited: string[]; steps: Step[] }> = [
    { at: start, visited: [start], steps: [] },
  ];
  while (queue.length > 0) {
    const { at, visited, steps } = queue.shift()!;
    if (steps.length >= 4) continue;
    for (const field of fieldsOf(types.get(at))) {
      if (field.name.startsWith("__") || !usable(field)) continue;
      const to = namedTypeOf(field.type);
      if (!to || !isComposite(types.get(to))) continue;
      const next = [...steps, { field, to }];
      const loopsTo = visited.indexOf(to);
      if (loopsTo >= 0) return { prefix: next.slice(0, loopsTo), cycle: next.slice(loopsTo) };
      queue.push({ at: to, visited: [...visited, to], steps: next });
    }
  }
  return undefined;
}

/** The field names from the root down to `depth` levels: the prefix once, then the cycle repeated. */
function fieldChain(path: CircularPath, depth: number): string[] {
  const chain = [path.root.name];
  const steps = [...path.prefix];
  while (chain.length + steps.length < depth) steps.push(...path.cycle);
  for (const step of steps.slice(0, depth - 1)) chain.push(step.field.name);
  return chain;
}

/** `query QaasDepth { pastes(limit: 1) { owner { pastes(limit: 1) { __typename } } } }`, `depth` fields deep. */
export function circularQuery(path: CircularPath, depth: number, rootArguments?: string): string {
  const steps = [...path.prefix];
  while (steps.length < depth - 1) steps.push(...path.cycle);
  const fields = [path.root, ...steps.slice(0, depth - 1).map((step) => step.field)];
  let body = "__typename";
  for (const field of [...fields].reverse()) {
    const args = field === path.root && rootArguments ? rootArguments : limitArguments(field);
    body = `${field.name}${args} { ${body} }`;
  }
  return `query QaasDepth { ${body} }`;
}

function limitArguments(field: IntrospectionField): string {
  const limit = (field.args ?? []).find(
    (argument) => LIMIT_ARGUMENT.test(argument.name) && namedTypeOf(argument.type) === "Int",
  );
  return limit ? `(${limit.name}: 1)` : "";
}

function usable(field: IntrospectionField): boolean {
  return !(field.args ?? []).some(isRequiredInput);
}

function isComposite(type: IntrospectionType | undefined): boolean {
  return type?.kind === "OBJECT" || type?.kind === "INTERFACE";
}

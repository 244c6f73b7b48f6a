import type { ResourceFamily } from "../api/operation-index.ts";
import { isSafeWrite, resourceFamilies } from "../api/operation-index.ts";
import { sendPrepared } from "../api/probe-support.ts";
import { bodyKind, buildRequest } from "../api/request-builder.ts";
import { extractId, uniqueSeed } from "../api/resource-factory.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { usableUsers } from "../session/probe-run.ts";
import { readableText, sentencesOf } from "./recovery-copy.ts";
import type { UiGraph } from "./ui-graph.ts";

// Documented length limits ("titles can be up to 120 characters") checked against the API with records of
// the probe's own: the copy is misleading when a value of exactly the promised length is refused while a
// short one in the same field is accepted. Only top-level collections the probe may create in, only on
// targets that allow writes; every record created is deleted again when the API offers a delete.

const HELP_PAGE = /help|faq|docs?\b|documentation|support|guide|knowledge|how-?to|manual|questions|tutorial/i;
const LENGTH_LIMIT =
  /\b(?:up to|at most|maximum of|max(?:imum)?\.?|no more than|limited to)\s+(\d{1,5})\s*(?:characters|chars|letters)\b/i;

export interface LengthPromise {
  page: string;
  role: string;
  sentence: string;
  limit: number;
}

export function lengthPromises(graph: UiGraph): LengthPromise[] {
  const promises: LengthPromise[] = [];
  const seen = new Set<string>();
  for (const walk of graph.roles)
    for (const page of walk.pages) {
      if (!page.html || page.status !== 200 || !page.text) continue;
      const title = page.text.match(/<title[^>]*>([^<]*)</i)?.[1] ?? "";
      if (!HELP_PAGE.test(page.path) && !HELP_PAGE.test(title)) continue;
      for (const sentence of sentencesOf(readableText(page.text))) {
        const limit = Number(sentence.match(LENGTH_LIMIT)?.[1] ?? Number.NaN);
        if (!Number.isFinite(limit) || limit < 2 || seen.has(sentence)) continue;
        seen.add(sentence);
        promises.push({ page: page.path, role: walk.role, sentence, limit });
      }
    }
  return promises;
}

export interface LengthTrial {
  family: string;
  field: string;
  exchanges: Array<{ label: string; exchange: HttpExchange }>;
  detail: string;
}

/** String fields of the create body whose name the sentence uses ("title", "display name"). */
function namedField(family: ResourceFamily, sentence: string): string | undefined {
  const schema = family.create?.request_body?.schema as { properties?: Record<string, { type?: string }> };
  const lower = sentence.toLowerCase();
  return Object.entries(schema?.properties ?? {})
    .filter(([, property]) => property?.type === "string")
    .map(([name]) => name)
    .find((name) => {
      const words = name
        .replace(/([a-z])([A-Z])/g, "$1 $2")
        .replace(/[_-]+/g, " ")
        .toLowerCase();
      return words.length > 2 && lower.includes(words);
    });
}

/**
 * Creates one record with the field at the promised length and one with a short value; a refusal of the
 * first next to an acceptance of the second is the finding. Answers why not otherwise.
 */
export async function tryLength(run: ProbeRun, promise: LengthPromise): Promise<LengthTrial | string> {
  if (!run.target.writesAllowed) return "the target does not allow writes";
  const families = resourceFamilies(run.map.operations).filter(
    (family) =>
      family.create &&
      family.parentParameters.length === 0 &&
      isSafeWrite(family.create) &&
      bodyKind(family.create) === "json",
  );
  const family = families.find((each) => namedField(each, promise.sentence));
  const field = family ? namedField(family, promise.sentence) : undefined;
  if (!family?.create || !field) return "no collection whose create body has the field the sentence names";
  const owner = (await usableUsers(run))[0]?.name;
  const created: Array<{ exchange: HttpExchange }> = [];
  const attempt = async (value: string): Promise<HttpExchange | undefined> => {
    const prepared = buildRequest(family.create as NonNullable<ResourceFamily["create"]>, {
      seed: uniqueSeed(),
    });
    prepared.body = { ...(prepared.body as Record<string, unknown>), [field]: value };
    const exchange = await sendPrepared(run, owner, prepared);
    if (exchange && isSuccess(exchange)) created.push({ exchange });
    return exchange;
  };
  try {
    const short = await attempt(`qaas ${uniqueSeed()}`.slice(0, Math.min(12, promise.limit)));
    if (!short || !isSuccess(short)) return `a short ${field} was refused too (${statusOf(short)})`;
    const full = await attempt("q".repeat(promise.limit));
    if (!full) return "the request at the promised length was not sent";
    if (isSuccess(full) || statusOf(full) >= 500)
      return `${promise.limit} characters answered ${statusOf(full)}: the promise holds or the failure is not about length`;
    return {
      family: family.collection,
      field,
      exchanges: [
        { label: "promised-length-refused", exchange: full },
        { label: "short-value-accepted", exchange: short },
      ],
      detail: `a ${field} of ${promise.limit} characters answered ${statusOf(full)}, a short one ${statusOf(short)}`,
    };
  } finally {
    await removeCreated(run, family, owner, created);
  }
}

/** The probe's own records go again: only those it created, through the API's own delete. */
async function removeCreated(
  run: ProbeRun,
  family: ResourceFamily,
  owner: string | undefined,
  created: Array<{ exchange: HttpExchange }>,
): Promise<void> {
  if (!family.remove || !family.idParameter || !isSafeWrite(family.remove)) return;
  for (const { exchange } of created) {
    const id = extractId(exchange, family);
    if (id === undefined) continue;
    const prepared = buildRequest(family.remove, {
      seed: uniqueSeed(),
      pathValues: { [family.idParameter]: id },
    });
    await sendPrepared(run, owner, prepared).catch(() => undefined);
  }
}

import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import { buildFinding } from "../evidence/finding.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";
import { operationKey } from "./operation-index.ts";
import { endpointLocation, sendPrepared } from "./probe-support.ts";
import { buildRequest, clonePrepared } from "./request-builder.ts";
import type { CreatedResource } from "./resource-factory.ts";
import { idOf, uniqueSeed } from "./resource-factory.ts";
import { stable, stepsFor, unwrap } from "./semantics-support.ts";

// A GET action under an item (`GET /orders/{id}/confirm`) whose collection offers no other way to read
// the item: the action's own answer is the only witness. Two signals that it changed the item rather than
// showing it: (1) the item it answers differs from the item the creation answered, in a field named after
// the action or now holding the action's past tense (`status: "open"` → `"confirmed"`, `confirmed: false`
// → `true`, `confirmed_at: null` → a time), and (2) a second GET answers that changed item again
// (persisted, not a one-off rendering).

type Change = { key: string; before: unknown; after: unknown };

/** The action a path names: its last literal segment (`confirm` in `/orders/{id}/confirm`). */
function actionOf(operation: Operation): string | undefined {
  const last = operation.path.split("/").filter(Boolean).pop();
  return last && !last.includes("{") ? last : undefined;
}

/** `confirm` → `confirm`, `approve` → `approv`, `publishing` → `publish`: what its inflections start with. */
export function actionStem(action: string): string | undefined {
  const word = action.toLowerCase().replace(/[^a-z]/g, "");
  const stem = word.replace(/(ation|ing|ion|ed|e)$/, "");
  return stem.length >= 4 ? stem : undefined;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  Boolean(value) && typeof value === "object" && !Array.isArray(value);

/** Whether changing `key` from `before` to `after` is what the action `stem` would do to an item. */
export function namesAction(stem: string, change: Change): boolean {
  const { key, before, after } = change;
  const keyNames = key
    .toLowerCase()
    .replace(/[^a-z]/g, "")
    .includes(stem);
  if (typeof after === "string" && typeof before === "string") {
    const word = (text: string) => text.toLowerCase().replace(/[^a-z]/g, "");
    return word(after).startsWith(stem) && !word(before).startsWith(stem);
  }
  if (after === true) return keyNames && (before === false || before === 0 || before === null);
  const unset = before === null || before === undefined || before === "";
  return keyNames && unset && (typeof after === "string" || typeof after === "number") && after !== "";
}

function changesBetween(before: Record<string, unknown>, after: Record<string, unknown>): Change[] {
  const left = stable(before) as Record<string, unknown>;
  const right = stable(after) as Record<string, unknown>;
  const changes: Change[] = [];
  for (const key of Object.keys(left)) {
    if (!(key in right)) continue;
    if (JSON.stringify(left[key]) !== JSON.stringify(right[key]))
      changes.push({ key, before: left[key], after: right[key] });
  }
  return changes;
}

/** The key wrapping the record in an answer (`{"data": {...}}` → `data.`), or "" when unwrapped. */
function wrapperPrefix(json: unknown): string {
  if (!isRecord(json)) return "";
  const keys = Object.keys(json);
  return keys.length === 1 && isRecord(json[keys[0]!]) ? `${keys[0]}.` : "";
}

export async function actionAnswersItsOwnChange(
  run: ProbeRun,
  get: Operation,
  resource: CreatedResource,
  pathValues: Record<string, string>,
  owner: string | undefined,
): Promise<EnvelopeDraft | undefined> {
  const action = actionOf(get);
  const stem = action && actionStem(action);
  const created = unwrap(resource.created);
  if (!stem || !isRecord(created)) return undefined;
  const request = buildRequest(get, { seed: uniqueSeed(), pathValues });
  const first = await sendPrepared(run, owner, request);
  if (!first || !isSuccess(first)) return undefined;
  const shown = unwrap(first.response?.json);
  if (!isRecord(shown) || idOf(shown, resource.family) !== resource.id) return undefined;
  const changes = changesBetween(created, shown).filter((change) => namesAction(stem, change));
  if (changes.length === 0) return undefined;
  const second = await sendPrepared(run, owner, clonePrepared(request));
  if (!second || !isSuccess(second)) return undefined;
  const again = unwrap(second.response?.json);
  if (!isRecord(again) || JSON.stringify(stable(again)) !== JSON.stringify(stable(shown))) return undefined;
  const key = operationKey(get);
  const change = changes[0]!;
  const described = changes
    .map((each) => `${each.key}: ${JSON.stringify(each.before)} → ${JSON.stringify(each.after)}`)
    .join(", ");
  return buildFinding(run, {
    domain: "api",
    defectClass: "contract-drift",
    title: `${key} changes the resource it reads (GET with a side effect)`,
    summary: `${key} answered the record the probe had just created with ${described} (${statusOf(first)}), and the same again on a second GET: the GET itself ${action}s the record. GET must be safe (RFC 9110 §9.2.1).`,
    impact:
      "Crawlers, prefetching browsers, link previews and retries trigger the change without anyone asking for it.",
    location: endpointLocation(get),
    severity: severityFor("contract-drift", { dataChanged: true }),
    confidence: 0.8,
    discriminator: "get-side-effect",
    exchanges: [
      { label: "create", exchange: resource.exchange },
      { label: "get", exchange: first },
      { label: "get-again", exchange: second },
    ],
    repro: {
      title: `${key} leaves the resource as it was created`,
      steps: stepsFor(resource, [{ name: "get", prepared: request, user: owner }]),
      assertions: [
        {
          kind: "json_equals",
          step: "get",
          path: `${wrapperPrefix(first.response?.json)}${change.key}`,
          value: change.before,
          message: `${key} must not change ${change.key}`,
        },
      ],
    },
  });
}

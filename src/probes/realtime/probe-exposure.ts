import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { passwordsInJson } from "../auditor/exposure-hashes.ts";
import { secretsInJson } from "../auditor/exposure-secrets.ts";
import { walkRecords } from "../auditor/exposure-walk.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import type { ProbedChannel } from "./channels.ts";
import { describeChannel } from "./channels.ts";
import type { Frame, RealtimeConnection } from "./connection.ts";
import type { EventSource } from "./event-source.ts";
import { frameWait } from "./event-source.ts";
import { mentions } from "./frames.ts";
import { canRead } from "./privacy.ts";
import type { RealtimeRun } from "./realtime-run.ts";
import { realtimeFinding, writeTranscript } from "./realtime-run.ts";

// ws-authorization, what an event carries: channels often publish the whole database row or ORM object
// (the author joined in) while the HTTP API's serializer picks fields, so every subscriber receives what
// the API keeps back. Only credentials count — a password, its hash, an API key, a token — since any other
// extra field may be meant for the live view. A finding needs all of:
//   - the owner's frame about a record the probe created carries the credential,
//   - the API's own answers about that record (its create answer, the owner's read) carry the record and
//     no field of that name: the API hides it (where it shows it too, the API's exposure is the finding),
//   - the frame about a second record of the same kind carries it again.

export interface CarriedCredential {
  /** The field's own name (`password_hash`). */
  key: string;
  /** Where in the frame (`data.author.password_hash`). */
  path: string;
  /** `bcrypt password hash`, `api_key value`. */
  what: string;
  value: string;
}

/** Passwords, password hashes and secrets anywhere in a frame's payload, by field. */
export function credentialsIn(json: unknown): CarriedCredential[] {
  const found = new Map<string, CarriedCredential>();
  const keyOf = (path: string) => (path.split(".").pop() ?? path).replace(/\[\d+\]$/, "");
  for (const exposure of [...passwordsInJson(json), ...secretsInJson(json)]) {
    if (exposure.path === "text" || found.has(exposure.path)) continue;
    found.set(exposure.path, {
      key: keyOf(exposure.path),
      path: exposure.path,
      what: exposure.what,
      value: exposure.value,
    });
  }
  return [...found.values()];
}

/** Every field name at any depth of a JSON answer. */
function fieldNames(json: unknown): Set<string> {
  const names = new Set<string>();
  walkRecords(json, ({ key, path }) => {
    if (path && !/\[\d+\]$/.test(path)) names.add(key);
  });
  return names;
}

interface ApiView {
  label: string;
  exchange: HttpExchange;
  fields: Set<string>;
}

/** The API's answers that carry the record: the create answer, and the owner's read of it. */
async function apiViews(realtime: RealtimeRun, source: EventSource, owner: string): Promise<ApiView[]> {
  const views: ApiView[] = [];
  const markers = source.event.needles.markers.filter((marker) => marker.length >= 6);
  const carries = (exchange: HttpExchange) =>
    isSuccess(exchange) && markers.some((marker) => (exchange.response?.body ?? "").includes(marker));
  const add = (label: string, exchange: HttpExchange) => {
    const json = exchange.response?.json;
    if (json !== undefined && carries(exchange)) views.push({ label, exchange, fields: fieldNames(json) });
  };
  add("owner-creates", source.event.exchange);
  const read = await canRead(realtime.run, source.event.resource, owner, source.event.listing);
  if (read.verdict === "allowed" && read.exchange) add("owner-reads", read.exchange);
  return views;
}

/** The frame the owner's socket receives about a second record of the source's kind. */
async function frameAboutAnother(
  realtime: RealtimeRun,
  source: EventSource,
  owner: { user: string; socket: RealtimeConnection },
): Promise<{ frame?: Frame; exchange?: HttpExchange }> {
  const sent = Date.now();
  const event = await realtime.driver.create(source.family, owner.user);
  if (!event) return {};
  const wait = frameWait(realtime.waitMs, Date.now() - sent, true);
  const frame = await owner.socket.waitFor((candidate) => mentions(candidate, event.needles), wait, event.at);
  return { exchange: event.exchange, ...(frame ? { frame } : {}) };
}

function shortValue(value: string): string {
  return value.length > 12 ? `${value.slice(0, 7)}… (${value.length} characters)` : "(short value)";
}

/**
 * The finding for credentials the owner's events carry and the API hides, checked on each event source
 * until one holds; undefined when none does.
 */
export async function hiddenCredentialsFinding(
  realtime: RealtimeRun,
  channel: ProbedChannel,
  owner: { user: string; socket: RealtimeConnection },
  sources: readonly EventSource[],
  stats: Record<string, unknown>,
): Promise<EnvelopeDraft | undefined> {
  const notes = realtime.run.notes;
  for (const source of sources) {
    const carried = credentialsIn(source.frame.json);
    if (carried.length === 0) continue;
    const collection = source.family.collection;
    const views = await apiViews(realtime, source, owner.user);
    if (views.length === 0) {
      notes.push(
        `${channel.name}: ${collection} events carry ${carried.map((entry) => entry.key).join(", ")}, but no API answer shows the record to compare with`,
      );
      continue;
    }
    const shown = new Set(views.flatMap((view) => [...view.fields]));
    const hidden = carried.filter((entry) => !shown.has(entry.key));
    if (hidden.length === 0) {
      notes.push(
        `${channel.name}: ${collection} events carry ${carried.map((entry) => entry.key).join(", ")}, which the API shows as well`,
      );
      continue;
    }
    const again = await frameAboutAnother(realtime, source, owner);
    const repeated = again.frame ? credentialsIn(again.frame.json) : [];
    const confirmed = hidden.filter((entry) => repeated.some((other) => other.key === entry.key));
    stats.credentials_in_events = confirmed.map((entry) => entry.path);
    if (confirmed.length === 0) {
      notes.push(
        `${channel.name}: one ${collection} event carried ${hidden.map((entry) => entry.key).join(", ")}, the next did not: not reported`,
      );
      continue;
    }
    const exchanges = [
      ...views.map((view) => ({ label: view.label, exchange: view.exchange })),
      ...(again.exchange ? [{ label: "owner-creates-again", exchange: again.exchange }] : []),
    ];
    const transcriptUri = writeTranscript(
      realtime,
      channel,
      "credentials",
      [{ label: `owner (${owner.user})`, user: owner.user, socket: owner.socket }],
      exchanges,
      {
        carried: confirmed.map((entry) => ({ path: entry.path, what: entry.what })),
        api_fields: [...shown].sort(),
      },
    );
    const fields = confirmed.map((entry) => entry.key).join(", ");
    const first = confirmed[0]!;
    return realtimeFinding(realtime, {
      defectClass: "ws-authorization",
      channel,
      title: `${describeChannel(channel)} sends ${fields} in its ${collection} events, which the API never shows`,
      summary:
        `Each ${collection} event on ${channel.name} carries ${confirmed.map((entry) => `${entry.what} at ${entry.path}`).join(", ")} ` +
        `(two records the probe created, two events), while the API's answers about the same record (${views.map((view) => `${view.exchange.request.method} ${new URL(view.exchange.request.url).pathname}`).join(", ")}) leave ${fields} out. ` +
        "The event is built from more than the API decided to show; it must be serialised the way the API's answer is.",
      impact:
        "Every socket the channel delivers to receives credentials (password material or keys) that the HTTP API keeps back: enough to take over the accounts they belong to.",
      severity: "high",
      confidence: 0.85,
      discriminator: "credentials",
      transcriptUri,
      exchanges,
      steps: [
        `Connect ${owner.user} to ${channel.name} with their own credential.`,
        `As ${owner.user}, ${source.event.exchange.request.method} ${collection} (a record of the probe's own); the answer has no ${fields}.`,
        `The event about it on ${owner.user}'s socket carries ${first.path} = ${shortValue(first.value)}.`,
        `Create another record: its event carries ${fields} again.`,
      ],
    });
  }
  return undefined;
}

import type { Frame } from "./connection.ts";

// Reading frames: whether one is about an event the probe caused (it carries a unique marker the probe
// planted, or the id of the resource it created), which field numbers the events, and who a signed-in user
// is (for channels whose events are about users, such as presence).

/** What identifies an event the probe caused. */
export interface EventNeedles {
  /** Unique strings planted in the request (they contain a random seed). */
  markers: string[];
  /** The id of the resource it concerns, matched only as the value of an id-like field. */
  id?: string;
  /**
   * Whether a frame's text carries another event's markers (one the run caused for another record): such a
   * frame is about that record even when one of its ids equals this one's (ids of different collections
   * collide, and the run's probes write at once).
   */
  foreign?: (text: string) => boolean;
}

const ID_KEY = /^(id|_id|uuid)$|(_id|Id|ID)$/;
const CONTROL_TYPE =
  /^(ping|pong|heartbeat|keepalive|keep-alive|ka|hello|welcome|connected|connection_ack|ack|ready|subscribed|auth_ok|authenticated|error)$/i;
const SEQUENCE_KEYS = [
  "seq",
  "sequence",
  "sequence_number",
  "sequenceNumber",
  "seqno",
  "offset",
  "event_id",
  "eventId",
  "version",
  "revision",
  "rev",
];

function walk(value: unknown, visit: (key: string, inner: unknown) => boolean, depth = 0): boolean {
  if (depth > 6 || value === null || typeof value !== "object") return false;
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    if (visit(key, inner)) return true;
    if (walk(inner, visit, depth + 1)) return true;
  }
  return false;
}

export function mentions(frame: Frame, needles: EventNeedles): boolean {
  if (needles.markers.some((marker) => marker.length >= 6 && frame.text.includes(marker))) return true;
  if (needles.id === undefined || frame.json === undefined) return false;
  const id = needles.id;
  const named = walk(
    frame.json,
    (key, inner) =>
      ID_KEY.test(key) && (typeof inner === "string" || typeof inner === "number") && String(inner) === id,
  );
  return named && !needles.foreign?.(frame.text);
}

/** Heartbeats, greetings, acknowledgements: frames that carry no application data. */
export function isControlFrame(frame: Frame): boolean {
  const json = frame.json as Record<string, unknown> | undefined;
  if (!json || typeof json !== "object" || Array.isArray(json))
    return frame.text.trim() === "" || /^(ping|pong)$/i.test(frame.text.trim());
  const type = json.type ?? json.event ?? json.op ?? json.kind;
  return typeof type === "string" && CONTROL_TYPE.test(type);
}

/** The numbering field of a frame (top level, or in `meta`), with its value. */
export function sequenceOf(frame: Frame, field?: string): { field: string; value: number } | undefined {
  const json = frame.json as Record<string, unknown> | undefined;
  if (!json || typeof json !== "object" || Array.isArray(json)) return undefined;
  const places = [json, json.meta, json.metadata].filter(
    (place): place is Record<string, unknown> => place !== null && typeof place === "object",
  );
  for (const key of field ? [field] : SEQUENCE_KEYS) {
    for (const place of places) {
      const value = place[key];
      if (typeof value === "number" && Number.isFinite(value)) return { field: key, value };
      if (typeof value === "string" && /^\d{1,15}$/.test(value)) return { field: key, value: Number(value) };
    }
  }
  return undefined;
}

/** The numbering field most application frames carry, if any. */
export function detectSequenceField(frames: readonly Frame[]): string | undefined {
  const counts = new Map<string, number>();
  const application = frames.filter((frame) => frame.direction === "in" && !isControlFrame(frame));
  for (const frame of application) {
    const found = sequenceOf(frame);
    if (found) counts.set(found.field, (counts.get(found.field) ?? 0) + 1);
  }
  const [best] = [...counts].sort((left, right) => right[1] - left[1]);
  return best && best[1] * 2 >= application.length ? best[0] : undefined;
}

export interface SequenceProblem {
  kind: "backwards" | "repeat" | "gap";
  previous: number;
  value: number;
  frameIndex: number;
  /** A repeat on two frames that say different things: two events numbered alike, not one sent twice. */
  distinct?: boolean;
}

/** A frame's text without its numbering field: what tells two events apart from one delivered twice. */
function contentOf(frame: Frame, field: string): string {
  const json = frame.json;
  if (!json || typeof json !== "object" || Array.isArray(json)) return frame.text;
  const { [field]: _numbering, ...rest } = json as Record<string, unknown>;
  return JSON.stringify(rest);
}

/** Where a subscriber's numbering goes backwards or repeats (and gaps, reported separately). */
export function sequenceProblems(frames: readonly Frame[], field: string): SequenceProblem[] {
  const problems: SequenceProblem[] = [];
  const contents = new Map<number, string>();
  let previous: number | undefined;
  frames.forEach((frame, frameIndex) => {
    const found = sequenceOf(frame, field);
    if (!found) return;
    const content = contentOf(frame, field);
    const earlier = contents.get(found.value);
    if (earlier === undefined) contents.set(found.value, content);
    if (previous !== undefined) {
      if (found.value === previous)
        problems.push({
          kind: "repeat",
          previous,
          value: found.value,
          frameIndex,
          distinct: earlier !== undefined && earlier !== content,
        });
      else if (found.value < previous)
        problems.push({ kind: "backwards", previous, value: found.value, frameIndex });
      else if (found.value > previous + 1)
        problems.push({ kind: "gap", previous, value: found.value, frameIndex });
    }
    previous = previous === undefined ? found.value : Math.max(previous, found.value);
  });
  return problems;
}

/**
 * Strings that identify a signed-in user in frames: the login name and the email, name or username the
 * sign-in answer returned (in its body or a `user` object), five characters or more.
 */
export function identityNeedles(username: string | undefined, signInAnswer: unknown): string[] {
  const needles = new Set<string>();
  if (username && username.length >= 5) needles.add(username);
  const take = (value: unknown): void => {
    if (!value || typeof value !== "object") return;
    for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
      if (/^(email|username|user_name|login|name|display_name|displayName|full_name|fullName)$/.test(key)) {
        if (typeof inner === "string" && inner.trim().length >= 5) needles.add(inner.trim());
      }
    }
  };
  take(signInAnswer);
  if (signInAnswer && typeof signInAnswer === "object") {
    const record = signInAnswer as Record<string, unknown>;
    take(record.user);
    take(record.data);
    take((record.data as Record<string, unknown> | undefined)?.user);
  }
  return [...needles];
}

// The one seam between qaas and an issue tracker. TRIAGE's tools, `qaas tracker-check` and the tests
// use only this interface; each backend (local files, GitHub Issues, Jira Cloud) is one adapter behind it,
// and a new backend changes nothing above it.

export type TrackerKind = "local" | "github" | "jira";

/** How a closed ticket was resolved, in qaas's words; a backend maps its own (state reason, resolution). */
export type Resolution = "fixed" | "wont_fix" | "duplicate" | "other";

export interface NewTicket {
  title: string;
  /** Markdown; the adapter appends the fingerprint markers, so callers never format them. */
  body: string;
  labels: string[];
  /** Every fingerprint the ticket covers (a root cause with several symptoms has several). */
  fingerprints: string[];
}

export interface Ticket {
  key: string;
  url: string | null;
  title: string;
  state: "open" | "closed";
  /** Set when closed; undefined when the backend did not say why. */
  resolution?: Resolution;
  labels: string[];
  fingerprints: string[];
}

/** Any field narrows; a fingerprint matches a ticket that covers it among others. */
export interface TicketQuery {
  fingerprint?: string;
  labels?: string[];
  text?: string;
  limit?: number;
}

/**
 * Where a ticket goes: `open` (reopen), `closed` with a resolution, or — for a workflow tracker — the name
 * of one of its transitions or statuses, matched without regard to case.
 */
export type TransitionTarget = "open" | "closed" | (string & {});

export type LinkRelation = "relates" | "duplicates" | "blocks";

/** One thing `check()` verified; `detail` says what was found or, on failure, what to do. */
export interface CheckItem {
  name: "credentials" | "project" | "create" | "comment" | "transition" | "labels" | "link";
  ok: boolean;
  detail: string;
}

export interface TrackerCheckReport {
  kind: TrackerKind;
  /** Where tickets would go, e.g. `owner/repo`, `https://site.atlassian.net project QA`. */
  target: string;
  ok: boolean;
  checks: CheckItem[];
}

export interface TrackerAdapter {
  readonly kind: TrackerKind;
  /** Where tickets go, for messages. */
  readonly target: string;
  create(ticket: NewTicket): Promise<Ticket>;
  get(key: string): Promise<Ticket>;
  search(query: TicketQuery): Promise<Ticket[]>;
  comment(key: string, text: string): Promise<void>;
  transition(key: string, to: TransitionTarget, resolution?: Resolution): Promise<Ticket>;
  addLabels(key: string, labels: string[]): Promise<void>;
  link(from: string, to: string, relation: LinkRelation): Promise<void>;
  /** Credentials, project and permissions (create, comment, transition); creates and changes nothing. */
  check(): Promise<TrackerCheckReport>;
}

/** A tracker refused or failed a call; `status` is the HTTP status when there was one. */
export class TrackerError extends Error {
  override readonly name = "TrackerError";
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export function reportOf(kind: TrackerKind, target: string, checks: CheckItem[]): TrackerCheckReport {
  return { kind, target, ok: checks.every((item) => item.ok), checks };
}

// The fingerprint is written into every ticket in plain text (and, where the backend has exact-match
// labels, as a label), so a later run — or a person — finds the ticket of a defect from the tracker alone.
const MARKER = "qaas-fingerprint:";
const MARKER_LINE = /qaas-fingerprint:\s*(fp_[0-9a-f]+)/g;

/** The body a tracker stores: the caller's text, then one marker line per fingerprint. */
export function bodyWithMarkers(body: string, fingerprints: readonly string[]): string {
  const markers = fingerprints.map((value) => `${MARKER} ${value}`).join("\n");
  return markers === "" ? body : `${body.trimEnd()}\n\n---\n${markers}\n`;
}

/** Fingerprints named in a stored body. */
export function markersIn(body: string | null | undefined): string[] {
  return [...new Set([...(body ?? "").matchAll(MARKER_LINE)].map((match) => match[1]!))];
}

/** `fp_…` → a label usable on every backend (Jira labels allow no spaces; GitHub's cap at 50 characters). */
export function fingerprintLabel(fingerprint: string): string {
  return `qaas-${fingerprint}`;
}

import fs from "node:fs";
import path from "node:path";
import { writeFileAtomic, writeFileExclusive } from "../store/atomic-write.ts";
import {
  bodyWithMarkers,
  type LinkRelation,
  type NewTicket,
  type Resolution,
  reportOf,
  type Ticket,
  type TicketQuery,
  type TrackerAdapter,
  type TrackerCheckReport,
  TrackerError,
  type TransitionTarget,
} from "./tracker.ts";

// The embedded default: tickets in `<home>/tickets/`, one Markdown file per ticket that a person can read
// (QA-1.md) and a small JSON index the adapter searches. Every write is atomic; a ticket's key is claimed
// by creating its file exclusively, so two runs filing at once never get the same key.

export const LOCAL_TICKET_PREFIX = "QA";
const INDEX_FILE = "index.json";

interface IndexEntry {
  title: string;
  state: "open" | "closed";
  resolution?: Resolution;
  labels: string[];
  fingerprints: string[];
  links: Array<{ to: string; relation: LinkRelation }>;
  created_at: string;
  updated_at: string;
}

interface TicketIndex {
  version: 1;
  tickets: Record<string, IndexEntry>;
}

const CLOSING_WORDS: Record<string, Resolution> = {
  closed: "fixed",
  close: "fixed",
  done: "fixed",
  fixed: "fixed",
  resolved: "fixed",
  wont_fix: "wont_fix",
  "won't fix": "wont_fix",
  duplicate: "duplicate",
};
const OPENING_WORDS = new Set(["open", "reopen", "reopened", "to do", "todo"]);

export class LocalTracker implements TrackerAdapter {
  readonly kind = "local" as const;
  readonly target: string;
  readonly dir: string;

  constructor(home: string) {
    this.dir = path.join(home, "tickets");
    this.target = this.dir;
  }

  async create(ticket: NewTicket): Promise<Ticket> {
    const index = this.#readIndex();
    const now = new Date().toISOString();
    let number = Object.keys(index.tickets).length + 1;
    let key: string;
    for (;;) {
      key = `${LOCAL_TICKET_PREFIX}-${number}`;
      const entry: IndexEntry = {
        title: ticket.title,
        state: "open",
        labels: [...new Set(ticket.labels)],
        fingerprints: [...new Set(ticket.fingerprints)],
        links: [],
        created_at: now,
        updated_at: now,
      };
      try {
        writeFileExclusive(this.#file(key), renderTicket(key, entry, ticket.body));
        index.tickets[key] = entry;
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        number += 1;
      }
    }
    this.#writeIndex(index);
    return this.get(key);
  }

  async get(key: string): Promise<Ticket> {
    return toTicket(key, this.#entry(this.#readIndex(), key), this.#file(key));
  }

  async search(query: TicketQuery): Promise<Ticket[]> {
    const text = query.text?.toLowerCase();
    const found: Ticket[] = [];
    for (const [key, entry] of Object.entries(this.#readIndex().tickets)) {
      if (query.fingerprint !== undefined && !entry.fingerprints.includes(query.fingerprint)) continue;
      if (query.labels?.some((label) => !entry.labels.includes(label))) continue;
      if (text !== undefined && !entry.title.toLowerCase().includes(text)) continue;
      found.push(toTicket(key, entry, this.#file(key)));
    }
    return found.slice(0, query.limit ?? 50);
  }

  async comment(key: string, text: string): Promise<void> {
    this.#update(key, (entry) => entry, `comment: ${text}`);
  }

  async transition(key: string, to: TransitionTarget, resolution?: Resolution): Promise<Ticket> {
    const word = to.trim().toLowerCase();
    if (OPENING_WORDS.has(word)) {
      this.#update(key, ({ resolution: _dropped, ...entry }) => ({ ...entry, state: "open" }), "reopened");
    } else if (CLOSING_WORDS[word] !== undefined) {
      const reason = resolution ?? CLOSING_WORDS[word];
      this.#update(key, (entry) => ({ ...entry, state: "closed", resolution: reason }), `closed (${reason})`);
    } else {
      throw new TrackerError(
        `local tracker: no transition "${to}" for ${key}; use open, reopen, closed, done, fixed, wont_fix or duplicate`,
      );
    }
    return this.get(key);
  }

  async addLabels(key: string, labels: string[]): Promise<void> {
    this.#update(
      key,
      (entry) => ({ ...entry, labels: [...new Set([...entry.labels, ...labels])] }),
      `labels added: ${labels.join(", ")}`,
    );
  }

  async link(from: string, to: string, relation: LinkRelation): Promise<void> {
    this.#entry(this.#readIndex(), to);
    this.#update(
      from,
      (entry) => ({ ...entry, links: [...entry.links, { to, relation }] }),
      `${relation} ${to}`,
    );
  }

  async check(): Promise<TrackerCheckReport> {
    try {
      fs.mkdirSync(this.dir, { recursive: true });
      fs.accessSync(this.dir, fs.constants.W_OK);
      const detail = `tickets are written to ${this.dir}`;
      return reportOf(this.kind, this.target, [
        { name: "project", ok: true, detail },
        { name: "create", ok: true, detail: "the folder is writable" },
        { name: "comment", ok: true, detail: "the folder is writable" },
        { name: "transition", ok: true, detail: "the folder is writable" },
      ]);
    } catch (error) {
      const detail = `${this.dir} is not writable (${error instanceof Error ? error.message : String(error)}); choose another --home`;
      return reportOf(this.kind, this.target, [{ name: "project", ok: false, detail }]);
    }
  }

  /** Changes one ticket's index entry, rewrites its header and appends a history line. */
  #update(key: string, change: (entry: IndexEntry) => IndexEntry, history: string): void {
    const index = this.#readIndex();
    const now = new Date().toISOString();
    const next = { ...change(this.#entry(index, key)), updated_at: now };
    index.tickets[key] = next;
    const file = this.#file(key);
    const text = fs.readFileSync(file, "utf8").replace(/^state: .*$/m, headerLine(next));
    const withHistory = text.includes("\n## History\n") ? text : `${text.trimEnd()}\n\n## History\n`;
    writeFileAtomic(file, `${withHistory.trimEnd()}\n- ${now} ${oneLine(history)}\n`);
    this.#writeIndex(index);
  }

  #entry(index: TicketIndex, key: string): IndexEntry {
    const entry = index.tickets[key];
    if (entry === undefined) {
      throw new TrackerError(`local tracker: no ticket ${key} in ${path.join(this.dir, INDEX_FILE)}`, 404);
    }
    return entry;
  }

  #file(key: string): string {
    if (!/^[A-Z]+-\d+$/.test(key)) {
      throw new TrackerError(
        `local tracker: "${key}" is not a ticket key (expected ${LOCAL_TICKET_PREFIX}-<number>)`,
      );
    }
    return path.join(this.dir, `${key}.md`);
  }

  #readIndex(): TicketIndex {
    const file = path.join(this.dir, INDEX_FILE);
    if (!fs.existsSync(file)) return { version: 1, tickets: {} };
    try {
      const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as TicketIndex;
      if (parsed?.version !== 1 || typeof parsed.tickets !== "object") throw new Error("unknown shape");
      return parsed;
    } catch (error) {
      throw new TrackerError(
        `local tracker: ${file} is not a ticket index (${error instanceof Error ? error.message : String(error)}); move it aside to start a new one`,
      );
    }
  }

  #writeIndex(index: TicketIndex): void {
    writeFileAtomic(path.join(this.dir, INDEX_FILE), `${JSON.stringify(index, null, 2)}\n`);
  }
}

function toTicket(key: string, entry: IndexEntry, file: string): Ticket {
  return {
    key,
    url: file,
    title: entry.title,
    state: entry.state,
    ...(entry.resolution ? { resolution: entry.resolution } : {}),
    labels: entry.labels,
    fingerprints: entry.fingerprints,
  };
}

function headerLine(entry: IndexEntry): string {
  const state = entry.state === "closed" ? `closed (${entry.resolution ?? "other"})` : "open";
  return `state: ${state} · labels: ${entry.labels.join(", ") || "none"}`;
}

function renderTicket(key: string, entry: IndexEntry, body: string): string {
  return `# ${key}: ${oneLine(entry.title)}\n\n${headerLine(entry)}\ncreated: ${entry.created_at}\n\n${bodyWithMarkers(body, entry.fingerprints)}`;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}

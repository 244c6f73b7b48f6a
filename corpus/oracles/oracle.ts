import type { Browser } from "playwright-core";
import type { CorpusServer } from "../model/servers.ts";

// A self-check oracle asks the running server a direct question that only the flaw answers "yes" to: a
// quote that breaks the vulnerable SQL and not the safe one, a marker echoed only by the vulnerable shell.
// The same oracle runs against a variant and its safe twin; the corpus is honest when the answers match
// the labels. Oracles are written from the flaw's definition, never from how qaas probes for it.

export type Person = "alice" | "bruno" | "dana";

export interface Ask {
  /** Who asks; undefined asks without credentials. */
  as?: Person;
  method?: string;
  path: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  cookies?: Record<string, string>;
  json?: unknown;
  form?: Record<string, string>;
  /** A raw body with its content type. */
  body?: string;
  contentType?: string;
  /** Cookie-session servers: send the session's CSRF token with a form (default true). */
  csrf?: boolean;
  /** Replace the credential the person would send (a forged token). */
  bearer?: string;
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

export interface LoopbackListener {
  /** A URL on 127.0.0.1 that records each request it gets under a unique path. */
  url(tag: string): string;
  hits(tag: string): number;
}

export interface OracleClient {
  server: CorpusServer;
  /** The running server's base URL (`http://127.0.0.1:port`), for oracles that open sockets. */
  baseUrl: string;
  ask(ask: Ask): Promise<Answer>;
  /** The bearer token (a JWT) a person's sign-in yields, on bearer servers. */
  token(person: Person): Promise<string>;
  /** The session cookie's value a person's form sign-in yields, on cookie servers. */
  sessionCookie(person: Person): Promise<string>;
  listener: LoopbackListener;
  /** The corpus's fake credentials (corpus.secrets.env), for oracles that sign in themselves. */
  secrets: Record<string, string>;
  /** The folder the servers run from (`<root>/servers/<name>`), for oracles that name a file the app ships. */
  corpusRoot: string;
  /** The check's one headless Chromium, launched on first use, for the UI oracles. */
  browser?: () => Promise<Browser>;
}

export interface Verdict {
  flawed: boolean;
  /** What was seen, for a failing self-check's message. */
  evidence: string;
}

export type Oracle = (client: OracleClient) => Promise<Verdict>;

export const verdict = (flawed: boolean, evidence: string): Verdict => ({ flawed, evidence });

/** The `items` array of a list answer, or an empty array. */
export function itemsOf(answer: Answer): Array<Record<string, unknown>> {
  const body = answer.json as { items?: unknown } | null;
  return Array.isArray(body?.items) ? (body.items as Array<Record<string, unknown>>) : [];
}

export function brief(answer: Answer): string {
  return `${answer.status} ${answer.text.replace(/\s+/g, " ").slice(0, 160)}`;
}

/** A unique inert marker. */
export function marker(prefix = "crp"): string {
  return `${prefix}${Math.random().toString(36).slice(2, 10)}`;
}

/** One request a probe wants to send; `url` is absolute, `body` already serialised. */
export interface HttpRequestSpec {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  /** Overrides the client's default timeout for this request (time-based probes bound their delay). */
  timeoutMs?: number;
  /** Overrides the body cap (512 KiB) for answers read whole, such as an API document. */
  maxBodyChars?: number;
}

export interface HttpResponseRecord {
  status: number;
  /** Lower-case header names; repeated headers joined with ", " (Set-Cookie is kept apart). */
  headers: Record<string, string>;
  setCookies: string[];
  contentType: string;
  /** The body as text, capped (see `truncated`). */
  body: string;
  truncated: boolean;
  /** The parsed body when it is JSON, else undefined. */
  json: unknown;
}

/** A request with what came back: the unit of evidence every probe records. */
export interface HttpExchange {
  sequence: number;
  startedAt: string;
  request: { method: string; url: string; headers: Record<string, string>; body?: string };
  /** Undefined when no response arrived (`error` says why). */
  response: HttpResponseRecord | undefined;
  error?: string;
  /** Set when the connection itself was lost: refused (nothing listens) or reset (closed mid-exchange). */
  connection?: "refused" | "reset";
  durationMs: number;
  /** The profile user the request was sent as; undefined for anonymous. */
  user?: string;
}

export const WRITE_METHODS: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export function isWriteMethod(method: string): boolean {
  return WRITE_METHODS.has(method.toUpperCase());
}

export function isSuccess(exchange: HttpExchange): boolean {
  const status = exchange.response?.status ?? 0;
  return status >= 200 && status < 300;
}

/** A 3xx answer (a post/redirect/get, a sign-in bounce); `Location` is the caller's to read. */
export function isRedirect(exchange: HttpExchange | undefined): boolean {
  const status = exchange?.response?.status ?? 0;
  return status >= 300 && status < 400;
}

export function statusOf(exchange: HttpExchange | undefined): number {
  return exchange?.response?.status ?? 0;
}

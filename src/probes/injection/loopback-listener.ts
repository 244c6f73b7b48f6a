import http from "node:http";
import type { AddressInfo } from "node:net";
import type { ToolContext } from "../../tools/context.ts";

// qaas's own loopback listener: the one place out-of-band probes (SSRF, XXE, deserialisation callbacks)
// may point a target at. It binds 127.0.0.1 only, records every request by the unique tokens in it, and
// answers a short text naming the token, so a target that shows what it fetched shows that too. One per
// run, shared by the tools of the run; it never keeps the process alive and closes when the run stops.

const TOKEN = /qaas[0-9a-f]{8}/g;
const SHARED_KEY = "injection:loopback-listener";

export interface ListenerHit {
  token: string;
  method: string;
  /** Path and query as requested. */
  url: string;
  userAgent: string | undefined;
  at: string;
}

export class LoopbackListener {
  private readonly hits: ListenerHit[] = [];
  private readonly waiters = new Set<() => void>();

  private constructor(
    private readonly server: http.Server,
    readonly port: number,
  ) {}

  static async start(): Promise<LoopbackListener> {
    let listener: LoopbackListener | undefined;
    const server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      request.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size <= 16_384) chunks.push(chunk);
      });
      request.on("end", () => {
        const url = request.url ?? "/";
        const text = `${url}\n${Buffer.concat(chunks).toString("utf8")}`;
        const tokens = [...new Set(text.match(TOKEN) ?? [])];
        listener?.record(tokens, request.method ?? "GET", url, request.headers["user-agent"]);
        response.writeHead(200, { "content-type": "text/plain; charset=utf-8", connection: "close" });
        response.end(tokens.length > 0 ? `qaas loopback listener: ${tokens.join(" ")}\n` : "qaas\n");
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    server.unref();
    listener = new LoopbackListener(server, (server.address() as AddressInfo).port);
    return listener;
  }

  /** `http://127.0.0.1:<port>/<kind>/<token>`: an address only this listener answers. */
  url(token: string, kind = "r"): string {
    return `http://127.0.0.1:${this.port}/${kind}/${token}`;
  }

  hitsFor(token: string): ListenerHit[] {
    return this.hits.filter((hit) => hit.token === token);
  }

  /** Waits up to `ms` for a request carrying `token` (a target may fetch in the background). */
  async waitFor(token: string, ms: number): Promise<ListenerHit | undefined> {
    const deadline = Date.now() + ms;
    for (;;) {
      const hit = this.hitsFor(token)[0];
      if (hit) return hit;
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, left);
        this.waiters.add(done);
      });
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private record(tokens: string[], method: string, url: string, userAgent: string | undefined): void {
    const at = new Date().toISOString();
    for (const token of tokens) this.hits.push({ token, method, url, userAgent, at });
    for (const wake of [...this.waiters]) wake();
  }
}

/** The run's listener, started on first use and closed when the run's signal aborts. */
export async function runListener(context: ToolContext): Promise<LoopbackListener> {
  let pending = context.shared.get(SHARED_KEY) as Promise<LoopbackListener> | undefined;
  if (!pending) {
    pending = LoopbackListener.start();
    context.shared.set(SHARED_KEY, pending);
    const listener = await pending;
    context.signal.addEventListener("abort", () => void listener.close(), { once: true });
  }
  return pending;
}

/**
 * Whether the target runs on this machine's loopback: only then does `127.0.0.1` mean the same host to the
 * target and to qaas, so an address of the listener points at nothing else.
 */
export function isLoopbackTarget(baseUrl: string): boolean {
  let host: string;
  try {
    host = new URL(baseUrl).hostname.replace(/^\[|\]$/g, "").toLowerCase();
  } catch {
    return false;
  }
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

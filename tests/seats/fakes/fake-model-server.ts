import http from "node:http";
import type { AddressInfo } from "node:net";

// The scripting and bookkeeping both fake model servers share. Each HTTP request to the model endpoint
// consumes the next scripted reply; every request is recorded (path, headers, parsed body) so a test can
// assert what the seat sent — the tool results, the stop-hook reason, the key header.

export interface ScriptedUsage {
  input: number;
  output: number;
}

export type ScriptedReply =
  /** The model calls one tool with these arguments. */
  | { tool: string; input: unknown; text?: string; usage?: ScriptedUsage; delayMs?: number }
  /** The model calls several tools in one turn. */
  | { calls: Array<{ tool: string; input: unknown }>; usage?: ScriptedUsage; delayMs?: number }
  /** The model stops calling tools and answers. */
  | { text: string; usage?: ScriptedUsage; delayMs?: number }
  /** The server answers with an HTTP error (its wire format's error body). */
  | { status: number; message?: string; headers?: Record<string, string> }
  /** The server accepts the request and drops the connection without answering. */
  | { reset: true };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

export interface FakeModelServer {
  /** `http://127.0.0.1:<port>` (no path). */
  url: string;
  requests: RecordedRequest[];
  /** Scripted replies not consumed yet. */
  remaining(): number;
  close(): Promise<void>;
}

export interface WireFormat {
  /** The one path the real API serves, e.g. `/v1/chat/completions`. */
  path: string;
  success(
    reply: Exclude<ScriptedReply, { status: number } | { reset: true }>,
    request: unknown,
    index: number,
  ): unknown;
  error(status: number, message: string): unknown;
}

/**
 * Answers a request from what it asks (its parsed body and its index), for a model playing several
 * conversations at once; undefined counts as an exhausted script.
 */
export type ScriptResponder = (body: unknown, index: number) => ScriptedReply | undefined;

export async function startFakeModelServer(
  format: WireFormat,
  script: ScriptedReply[] | ScriptResponder,
): Promise<FakeModelServer> {
  const respondTo = typeof script === "function" ? script : undefined;
  const queue = typeof script === "function" ? [] : [...script];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<import("node:net").Socket>();
  let answered = 0;

  const server = http.createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let body: unknown = text;
      try {
        body = text === "" ? undefined : JSON.parse(text);
      } catch {
        // keep the raw text: a seat sending non-JSON is itself worth asserting on
      }
      requests.push({
        method: incoming.method ?? "",
        path: incoming.url ?? "",
        headers: incoming.headers,
        body,
      });
      const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
        outgoing.writeHead(status, { "content-type": "application/json", ...headers });
        outgoing.end(JSON.stringify(payload));
      };
      if (incoming.method !== "POST" || incoming.url !== format.path) {
        send(
          404,
          format.error(
            404,
            `fake server: no route ${incoming.method} ${incoming.url}; expected POST ${format.path}`,
          ),
        );
        return;
      }
      if ((body as { stream?: unknown } | undefined)?.stream === true) {
        send(400, format.error(400, "fake server: streaming is not scripted"));
        return;
      }
      const reply = respondTo ? respondTo(body, requests.length - 1) : queue.shift();
      if (reply === undefined) {
        send(
          418,
          format.error(418, "fake server: script exhausted (the seat made more requests than scripted)"),
        );
        return;
      }
      if ("reset" in reply) {
        incoming.socket.destroy();
        return;
      }
      if ("status" in reply) {
        send(
          reply.status,
          format.error(reply.status, reply.message ?? `scripted HTTP ${reply.status}`),
          reply.headers,
        );
        return;
      }
      const index = answered;
      answered += 1;
      const respond = () => send(200, format.success(reply, body, index));
      if (reply.delayMs !== undefined) setTimeout(respond, reply.delayMs);
      else respond();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    remaining: () => queue.length,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export function toolCallsOf(reply: ScriptedReply): Array<{ tool: string; input: unknown }> {
  if ("calls" in reply) return reply.calls;
  if ("tool" in reply) return [{ tool: reply.tool, input: reply.input }];
  return [];
}

import http from "node:http";
import type { AddressInfo } from "node:net";

// A tiny HTTP server for the tracker fakes: JSON in, JSON out, every request kept for assertions.

export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

export interface Reply {
  status: number;
  body?: unknown;
}

export interface FakeServer {
  url: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

export async function startFakeServer(route: (request: SeenRequest) => Reply): Promise<FakeServer> {
  const requests: SeenRequest[] = [];
  const server = http.createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      const url = new URL(incoming.url ?? "/", "http://fake");
      const text = Buffer.concat(chunks).toString("utf8");
      const request: SeenRequest = {
        method: incoming.method ?? "GET",
        path: url.pathname,
        query: url.searchParams,
        headers: incoming.headers,
        body: text === "" ? undefined : JSON.parse(text),
      };
      requests.push(request);
      let reply: Reply;
      try {
        reply = route(request);
      } catch (error) {
        reply = { status: 500, body: { message: String(error) } };
      }
      outgoing.writeHead(reply.status, { "content-type": "application/json; charset=utf-8" });
      outgoing.end(reply.body === undefined ? "" : JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

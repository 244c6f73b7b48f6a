import http from "node:http";
import type { AddressInfo } from "node:net";
import type { LoopbackListener } from "../oracles/oracle.ts";

// A loopback HTTP listener that counts requests per tag: the SSRF oracle's witness.

export async function startListener(): Promise<LoopbackListener & { close(): Promise<void> }> {
  const hits = new Map<string, number>();
  const server = http.createServer((request, response) => {
    const tag = (request.url ?? "/").split("/")[2] ?? "";
    hits.set(tag, (hits.get(tag) ?? 0) + 1);
    response.writeHead(200, { "content-type": "text/plain" });
    response.end(`listener saw ${tag}`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (tag) => `http://127.0.0.1:${port}/hit/${tag}`,
    hits: (tag) => hits.get(tag) ?? 0,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

import http from "node:http";
import type { AddressInfo } from "node:net";

// A loopback HTTP server whose handler gets the request's body as text, read to its end: the small
// scripted targets of the probe tests.

export interface TextServer {
  baseUrl: string;
  close(): Promise<void>;
}

export type TextHandler = (
  request: http.IncomingMessage,
  text: string,
  response: http.ServerResponse,
) => void;

export async function startTextServer(handle: TextHandler): Promise<TextServer> {
  const server = http.createServer((request, response) => {
    let text = "";
    request.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    request.on("end", () => handle(request, text, response));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

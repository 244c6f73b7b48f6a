import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findWebSocketPaths } from "../../src/probes/routes/find-source-routes.ts";

// Several `upgrade` listeners sharing one HTTP server (the ws README's "multiple servers sharing a single
// HTTP server" pattern, Fastify or Express apps with one listener per channel) each return early for paths
// that are not theirs. The guard clause names the channel as surely as an `===` branch does.

const folders: string[] = [];

function project(source: string): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-upgrade-guard-"));
  folders.push(root);
  fs.writeFileSync(path.join(root, "server.mjs"), source);
  return root;
}

afterEach(() => {
  for (const folder of folders.splice(0)) fs.rmSync(folder, { recursive: true, force: true });
});

describe("WebSocket paths of upgrade listeners", () => {
  it("finds a channel behind a guard clause that returns for every other path", () => {
    const root = project(`import http from "node:http";
import { WebSocketServer } from "ws";
const server = http.createServer();
const feed = new WebSocketServer({ noServer: true });
const chat = new WebSocketServer({ noServer: true });
server.on("upgrade", (request, socket, head) => {
  const { pathname } = new URL(request.url, "http://localhost");
  if (pathname !== "/live/feed") return;
  feed.handleUpgrade(request, socket, head, (ws) => feed.emit("connection", ws, request));
});
server.on("upgrade", async (request, socket, head) => {
  const url = new URL(request.url, "http://localhost");
  if (url.pathname != "/live/chat") {
    throw new Error("not mine");
  }
  chat.handleUpgrade(request, socket, head, (ws) => chat.emit("connection", ws, request));
});
`);
    expect(
      findWebSocketPaths(root)
        .map((channel) => channel.path)
        .sort(),
    ).toEqual(["/live/chat", "/live/feed"]);
  });

  it("reads no channel from a `!==` that is not a guard (no early exit, or an else branch)", () => {
    const root = project(`import http from "node:http";
const server = http.createServer();
server.on("upgrade", (request, socket) => {
  const { pathname } = new URL(request.url, "http://localhost");
  if (pathname !== "/metrics") console.log("upgrade", pathname);
  if (pathname !== "/other") { socket.destroy(); } else { socket.end(); }
  socket.destroy();
});
`);
    expect(findWebSocketPaths(root)).toEqual([]);
  });
});

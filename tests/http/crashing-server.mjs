// A server that dies on one request the way many do: a value from the query goes into a response header
// after an await, Node rejects its CR/LF, nothing catches it and the process exits. Other requests answer;
// GET /drop closes its own connection without dying; GET /explode?x=boom… exits. Sessions live in memory, as with many frameworks'
// defaults: POST /login answers a token, GET /me answers its user, and a restart forgets every token.
// Prints its port on stdout once it listens.
import { randomUUID } from "node:crypto";
import http from "node:http";

const sessions = new Map();

const server = http.createServer((request, response) => {
  const url = new URL(request.url ?? "/", "http://localhost");
  if (url.pathname === "/health") return response.end("ok");
  if (url.pathname === "/login" && request.method === "POST") {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      const token = randomUUID();
      sessions.set(token, JSON.parse(body).username);
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ token }));
    });
    return;
  }
  if (url.pathname === "/me") {
    const user = sessions.get((request.headers.authorization ?? "").replace(/^Bearer /, ""));
    response.statusCode = user ? 200 : 401;
    return response.end(user ?? "who are you?");
  }
  if (url.pathname === "/drop") return request.socket.destroy();
  // Dies on an input no shape gives away (a bug in the handler's own logic).
  if (url.pathname === "/explode" && url.searchParams.get("x")?.startsWith("boom")) process.exit(1);
  if (url.pathname === "/slow") return setTimeout(() => response.end("slow"), 400);
  if (url.pathname.startsWith("/next")) {
    const target = url.searchParams.get("to") ?? "/";
    setImmediate(() => {
      response.setHeader("Location", target);
      response.statusCode = 302;
      response.end();
    });
    return;
  }
  response.setHeader("content-type", "text/plain");
  response.end(`hello ${url.pathname}`);
});
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  process.stdout.write(`${server.address().port}\n`);
});

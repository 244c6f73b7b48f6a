import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { Operation } from "../../src/map/system-map.ts";
import { authzFindings } from "../fixtures/authz-run.ts";
import { undocumented, undocumentedPost } from "../fixtures/probe-harness.ts";

// A server-rendered application whose writes are HTML forms answered the post/redirect/get way: a new task
// is a `303` to its page (`/tasks/7`), an action on a task a `303` back to the list, and nothing answers
// JSON. `flawed` lets any signed-in user close anyone's task; its `pin` action checks the owner like
// everything in `sound` does. `unchecked` is `flawed` whose task read answers any task to anyone, as JSON. Only the
// owner's task page shows what an action did.

const TOKENS: Record<string, string> = { "token-ada": "ada", "token-ben": "ben" };

interface Task {
  id: number;
  owner: string;
  title: string;
  status: string;
  pinned: boolean;
}

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

type Build = "flawed" | "sound" | "unchecked";

async function startTasks(build: Build): Promise<string> {
  let next = 7;
  const tasks = new Map<number, Task>();
  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const form = new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
    const caller = TOKENS[(request.headers.authorization ?? "").replace(/^Bearer\s+/i, "")];
    const page = (status: number, body: string) => {
      response.writeHead(status, { "content-type": "text/html; charset=utf-8" });
      response.end(`<!doctype html><html><body><nav><a href="/tasks">Tasks</a></nav>${body}</body></html>`);
    };
    const redirect = (location: string) => {
      response.writeHead(303, { location: `http://${request.headers.host}${location}` });
      response.end();
    };
    if (!caller) return page(401, "<h1>Sign in first</h1>");
    const url = new URL(request.url ?? "/", "http://fixture.invalid");
    const route = `${request.method} ${url.pathname}`;
    if (route === "GET /tasks") {
      const own = [...tasks.values()].filter((task) => task.owner === caller);
      return page(
        200,
        `<ul>${own.map((task) => `<li><a href="/tasks/${task.id}">${task.title}</a></li>`).join("")}</ul>`,
      );
    }
    if (route === "POST /tasks") {
      const title = form.get("title") ?? "";
      if (!title) return page(200, `<form method="post" action="/tasks"><input name="title"></form>`);
      const id = next++;
      tasks.set(id, { id, owner: caller, title, status: "open", pinned: false });
      return redirect(`/tasks/${id}`);
    }
    const match = url.pathname.match(/^\/tasks\/(\d+)(?:\/(close|pin))?$/);
    const task = match ? tasks.get(Number(match[1])) : undefined;
    if (!match || !task) return page(404, "<h1>Not found</h1>");
    const action = match[2];
    if (request.method === "GET" && !action) {
      if (build === "unchecked") {
        response.writeHead(200, { "content-type": "application/json" });
        return response.end(JSON.stringify(task));
      }
      if (task.owner !== caller) return page(404, "<h1>Not found</h1>");
      return page(
        200,
        `<main><h1>${task.title}</h1><p>Status: ${task.status}</p><p>${task.pinned ? "Pinned" : "Not pinned"}</p></main>`,
      );
    }
    if (request.method !== "POST" || !action) return page(405, "<h1>Method not allowed</h1>");
    const checksOwner = build === "sound" || action === "pin";
    if (checksOwner && task.owner !== caller) return page(404, "<h1>Not found</h1>");
    if (action === "close") task.status = "closed";
    else task.pinned = true;
    return redirect("/tasks");
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function operation(method: string, path: string, fields: string[] = []): Operation {
  const parameters: Operation["parameters"] = path.includes("{id}")
    ? [{ name: "id", in: "path", required: true, schema: { type: "integer" } }]
    : [];
  if (method !== "POST") return { ...undocumented(method, path, ["source", "link"]), parameters };
  const properties = Object.fromEntries(fields.map((name) => [name, { type: "string" }]));
  return {
    ...undocumentedPost(path, "application/x-www-form-urlencoded", properties, []),
    seen_in: ["source", "form"],
    parameters,
    form: { page: "/tasks", enctype: "application/x-www-form-urlencoded" },
  };
}

async function leaks(build: Build): Promise<string[]> {
  return authzFindings("tasks", await startTasks(build), [
    operation("GET", "/tasks"),
    operation("POST", "/tasks", ["title"]),
    operation("GET", "/tasks/{id}"),
    operation("POST", "/tasks/{id}/close"),
    operation("POST", "/tasks/{id}/pin"),
  ]);
}

describe("authz_matrix on actions behind server-rendered forms", () => {
  it("creates through a form answered with a redirect and sees another user's action on the owner's page", async () => {
    expect(await leaks("flawed")).toEqual(["missing-authorization POST /tasks/{id}/close"]);
  });

  it("reports an action on another user's task even when the task's read is open to them too", async () => {
    // The open read is a leak of its own, so it proves nothing shared: the close is still judged.
    expect((await leaks("unchecked")).sort()).toEqual([
      "missing-authorization GET /tasks/{id}",
      "missing-authorization POST /tasks/{id}/close",
    ]);
  });

  it("reports nothing when every action checks the owner", async () => {
    expect(await leaks("sound")).toEqual([]);
  });
});

import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

// A small server-rendered app with a cookie session and one "rename my newest record" action per guard:
// none (vulnerable), a session-bound CSRF token, JSON-only (a form cannot send it), and an action that needs
// no session at all (missing authentication, not CSRF). `lists` checks its token on POST but also renames
// on GET, from the query, where no token is checked. `cards` is unguarded too but shows no form: a map
// learns it from the source, where its body looks like JSON although the handler reads form fields.

export interface CsrfApp {
  baseUrl: string;
  /** The signed-in user's contact details, edited by an unguarded profile form that shows them. */
  profile: { email: string; phone: string };
  /** Record titles by collection, for asserting what the probe left behind. */
  titles: Record<string, string[]>;
  close(): Promise<void>;
}

const COLLECTIONS = ["notes", "tags", "labels", "boards", "cards", "lists"] as const;
type Collection = (typeof COLLECTIONS)[number];
const GUARD: Record<Collection, "none" | "token" | "json-only" | "anonymous"> = {
  notes: "none",
  tags: "token",
  labels: "json-only",
  boards: "anonymous",
  cards: "none",
  lists: "token",
};
const WITH_FORM: readonly Collection[] = ["notes", "tags", "boards", "lists"];
/** Renamed by any method, its fields read from the query on GET, where (as frameworks do) no token is checked. */
const ANY_METHOD: readonly Collection[] = ["lists"];

export async function startCsrfApp(
  options: { sameSite?: "Strict" | "Lax"; busyWrites?: boolean } = {},
): Promise<CsrfApp> {
  // A busy server (a locked database) fails the first two writes to each action with a 503.
  const busy = new Map<string, number>(COLLECTIONS.map((name) => [name, options.busyWrites ? 2 : 0]));
  const sessions = new Map<string, { user: string; csrf: string }>();
  const records: Record<Collection, Array<{ id: number; title: string; owner: string }>> = {
    notes: [{ id: 1, title: "Groceries", owner: "alice" }],
    tags: [{ id: 1, title: "Urgent", owner: "alice" }],
    labels: [{ id: 1, title: "Blue", owner: "alice" }],
    boards: [{ id: 1, title: "Roadmap", owner: "alice" }],
    cards: [
      { id: 1, title: "Bob's card", owner: "bob" },
      { id: 2, title: "Welcome", owner: "alice" },
    ],
    lists: [{ id: 1, title: "Chores", owner: "alice" }],
  };
  const profile = { email: "alice@fixture.test", phone: "+44 20 7946 0000" };
  const server = http.createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://fixture.invalid");
    const body = await readBody(request);
    const cookies = Object.fromEntries(
      (request.headers.cookie ?? "")
        .split(";")
        .map((part) => part.trim().split("="))
        .filter((pair) => pair.length === 2),
    );
    const session = sessions.get(cookies.sid ?? "");
    const json = (status: number, value: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(value));
    };
    if (request.method === "GET" && url.pathname === "/login") {
      response.writeHead(200, { "content-type": "text/html" });
      response.end(
        `<form method="post" action="/login"><input name="username"><input name="password" type="password"><button>Sign in</button></form>`,
      );
      return;
    }
    if (request.method === "POST" && url.pathname === "/login") {
      const form = new URLSearchParams(body);
      if (form.get("password") !== `${form.get("username")}-password`) {
        response.writeHead(401, { "content-type": "text/html" });
        response.end("wrong");
        return;
      }
      const sid = randomBytes(16).toString("hex");
      sessions.set(sid, { user: form.get("username")!, csrf: randomBytes(16).toString("hex") });
      const sameSite = options.sameSite ? `; SameSite=${options.sameSite}` : "";
      response.writeHead(303, { location: "/", "set-cookie": `sid=${sid}; HttpOnly; Path=/${sameSite}` });
      response.end();
      return;
    }
    if (request.method === "GET" && url.pathname === "/") {
      if (!session) {
        response.writeHead(303, { location: "/login" });
        response.end();
        return;
      }
      const forms = WITH_FORM.map(
        (name) =>
          `<form method="post" action="/api/${name}/rename"><input name="title"><input type="hidden" name="csrf_token" value="${session.csrf}"><button>Rename</button></form>`,
      ).join("");
      response.writeHead(200, { "content-type": "text/html" });
      response.end(`<html><body>${forms}</body></html>`);
      return;
    }
    if (url.pathname === "/profile") {
      if (!session) return json(401, { error: "sign in" });
      if (request.method === "POST") {
        const fields = new URLSearchParams(body);
        profile.email = fields.get("email") ?? profile.email;
        profile.phone = fields.get("phone") ?? profile.phone;
        response.writeHead(303, { location: "/profile" });
        response.end();
        return;
      }
      response.writeHead(200, { "content-type": "text/html" });
      response.end(
        `<form method="post"><input type="hidden" name="csrf_token" value="${session.csrf}"><input name="email" type="email" value="${profile.email}"><input name="phone" type="tel" value="${profile.phone}"><button>Save</button></form>`,
      );
      return;
    }
    const match = url.pathname.match(/^\/api\/(\w+)(\/rename)?$/);
    const collection = match?.[1] as Collection | undefined;
    if (!collection || !COLLECTIONS.includes(collection)) return json(404, { error: "not found" });
    const guard = GUARD[collection];
    if (request.method === "GET" && !match?.[2]) {
      if (!session) return json(401, { error: "sign in" });
      return json(200, { items: records[collection].filter((record) => record.owner === session.user) });
    }
    const byLink = request.method === "GET" && Boolean(match?.[2]) && ANY_METHOD.includes(collection);
    if ((request.method !== "POST" && !byLink) || !match?.[2]) return json(405, { error: "method" });
    const failures = busy.get(collection) ?? 0;
    if (failures > 0) {
      busy.set(collection, failures - 1);
      return json(503, { error: "database is locked" });
    }
    if (!session && guard !== "anonymous") return json(401, { error: "sign in" });
    const type = String(request.headers["content-type"] ?? "");
    let fields: Record<string, string>;
    if (byLink) {
      fields = Object.fromEntries(url.searchParams);
    } else if (guard === "json-only") {
      if (!type.startsWith("application/json")) return json(415, { error: "JSON only" });
      fields = JSON.parse(body) as Record<string, string>;
    } else {
      fields = Object.fromEntries(new URLSearchParams(body));
    }
    if (guard === "token" && !byLink && fields.csrf_token !== session?.csrf)
      return json(403, { error: "bad token" });
    const owner = session?.user ?? "alice";
    const newest = records[collection].filter((record) => record.owner === owner).at(-1);
    if (!newest || !fields.title) return json(400, { error: "title" });
    newest.title = fields.title;
    return json(200, newest);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    profile,
    get titles() {
      return Object.fromEntries(
        COLLECTIONS.map((name) => [name, records[name].map((record) => record.title)]),
      ) as Record<string, string[]>;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}

import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

// A small booking desk, server-rendered with cookie sessions and CSRF tokens: a customer books through a
// form whose date must be a date and whose slot (a select a script fills) must be a time, and sees the
// booking on their own page, escaped. Staff see every booking on a day sheet and a booking page. The
// vulnerable build prints the customer's note raw on those staff pages only; the safe build escapes it.

export interface DeskApp {
  baseUrl: string;
  bookings: Array<{ id: number; user: string; day: string; slot: string; note: string }>;
  close(): Promise<void>;
}

export const DESK_USERS = {
  pat: { password: "pat-desk-pass-1", role: "customer" },
  sue: { password: "sue-desk-pass-2", role: "staff" },
} as const;

type DeskUser = keyof typeof DESK_USERS;

const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

function page(body: string, csrf?: string): string {
  const meta = csrf ? `<meta name="csrf-token" content="${csrf}">` : "";
  return `<!doctype html><html><head><title>Desk</title>${meta}</head><body>${body}</body></html>`;
}

async function readForm(request: http.IncomingMessage): Promise<URLSearchParams> {
  let text = "";
  for await (const chunk of request) text += chunk;
  return new URLSearchParams(text);
}

export async function startDeskApp(options: { vulnerable: boolean }): Promise<DeskApp> {
  const sessions = new Map<string, { user?: DeskUser; csrf: string }>();
  const bookings: DeskApp["bookings"] = [];
  const server = http.createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://desk.local");
    let sid = /(?:^|;\s*)sid=([a-f0-9]+)/.exec(request.headers.cookie ?? "")?.[1];
    let session = sid ? sessions.get(sid) : undefined;
    const headers: Record<string, string> = {};
    if (!session) {
      sid = randomBytes(8).toString("hex");
      session = { csrf: randomBytes(12).toString("hex") };
      sessions.set(sid, session);
      headers["set-cookie"] = `sid=${sid}; Path=/; HttpOnly`;
    }
    const html = (status: number, body: string) => {
      response.writeHead(status, { ...headers, "content-type": "text/html; charset=utf-8" });
      response.end(page(body, session.csrf));
    };
    const redirect = (location: string) => {
      response.writeHead(302, { ...headers, location });
      response.end();
    };
    const csrfField = `<input type="hidden" name="csrf_token" value="${session.csrf}">`;
    const checked = async () => {
      const form = await readForm(request);
      return form.get("csrf_token") === session.csrf ? form : undefined;
    };
    const route = `${request.method} ${url.pathname}`;
    if (route === "GET /login")
      return html(
        200,
        `<form method="post" action="/login">${csrfField}<input name="username"><input type="password" name="password"><button>Sign in</button></form>`,
      );
    if (route === "POST /login") {
      const form = await checked();
      if (!form) return html(400, "<p>The form expired.</p>");
      const name = form.get("username") as DeskUser;
      if (!DESK_USERS[name] || DESK_USERS[name].password !== form.get("password"))
        return html(200, "<p>Wrong name or password.</p>");
      session.user = name;
      return redirect("/");
    }
    const user = session.user;
    if (!user) return redirect("/login");
    const role = DESK_USERS[user].role;
    if (route === "GET /") return html(200, `<p>Hello ${user}</p>`);
    if (route === "GET /book") {
      if (role !== "customer") return html(403, "<p>customers only</p>");
      return html(
        200,
        `<form method="post" action="/book">${csrfField}<input type="date" name="day" required><select name="slot" required><option value="">Pick a day first</option></select><textarea name="note"></textarea><button>Book</button></form>`,
      );
    }
    if (route === "POST /book") {
      if (role !== "customer") return html(403, "<p>customers only</p>");
      const form = await checked();
      if (!form) return html(400, "<p>The form expired.</p>");
      const [day, slot, note] = ["day", "slot", "note"].map((field) => form.get(field) ?? "");
      if (!/^\d{4}-\d{2}-\d{2}$/.test(day!) || !/^\d{2}:\d{2}$/.test(slot!))
        return html(422, "<p>Choose a day and a slot.</p>");
      const id = bookings.length + 1;
      bookings.push({ id, user, day: day!, slot: slot!, note: note! });
      return redirect(`/bookings/${id}`);
    }
    const own = /^\/bookings\/(\d+)$/.exec(url.pathname);
    if (request.method === "GET" && own) {
      const booking = bookings.find((entry) => entry.id === Number(own[1]) && entry.user === user);
      if (!booking) return html(404, "<p>not found</p>");
      return html(200, `<h1>Your booking</h1><p>${escapeHtml(booking.note)}</p>`);
    }
    const shown = (note: string) => (options.vulnerable ? note : escapeHtml(note));
    const staff = /^\/staff\/bookings\/(\d+)$/.exec(url.pathname);
    if (request.method === "GET" && staff) {
      if (role !== "staff") return html(403, "<p>staff only</p>");
      const booking = bookings.find((entry) => entry.id === Number(staff[1]));
      if (!booking) return html(404, "<p>not found</p>");
      return html(200, `<h1>Booking ${booking.id}</h1><div>${shown(booking.note)}</div>`);
    }
    if (route === "GET /staff/day") {
      if (role !== "staff") return html(403, "<p>staff only</p>");
      const rows = bookings.map((entry) => `<tr><td>${entry.slot}</td><td>${shown(entry.note)}</td></tr>`);
      return html(200, `<table>${rows.join("")}</table>`);
    }
    html(404, "<p>not found</p>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    bookings,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

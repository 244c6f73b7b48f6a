import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

// A small server-rendered shop, the shape of many Express/Flask apps without an API document: a sign-in
// form whose hidden `next` field says where to go once signed in (a cookie session), an order form whose
// handler reads every field — the read-only price included — and checks the email against a strict
// two-or-three-letter-TLD pattern, and a page listing the signed-in user's own orders. Only admins may
// order. The vulnerable build redirects to any `next` and prints orders raw; the safe one keeps `next` on
// its own origin and escapes. Both have a `/continue` whose allow-list parses the target against an https
// base, so `https:host` (a path to an https page) passes it unchanged.

export interface ShopApp {
  baseUrl: string;
  orders: Array<{ user: string; mail: string; note: string; price: string }>;
  close(): Promise<void>;
}

export const SHOP_USERS = {
  ada: { password: "ada-shop-pass-1", role: "admin" },
  bo: { password: "bo-shop-pass-22", role: "user" },
} as const;

const STRICT_EMAIL = /^[a-zA-Z0-9][a-zA-Z0-9._-]*@[a-z0-9]+\.[a-z]{2,3}$/;

const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

function page(body: string): string {
  return `<!doctype html><html><head><title>Shop</title></head><body>${body}</body></html>`;
}

async function readForm(request: http.IncomingMessage): Promise<URLSearchParams> {
  let text = "";
  for await (const chunk of request) text += chunk;
  return new URLSearchParams(text);
}

export async function startShopApp(options: { vulnerable: boolean }): Promise<ShopApp> {
  const sessions = new Map<string, keyof typeof SHOP_USERS>();
  const orders: ShopApp["orders"] = [];
  const html = (response: http.ServerResponse, status: number, body: string) => {
    response.writeHead(status, { "content-type": "text/html; charset=utf-8" });
    response.end(page(body));
  };
  const redirect = (response: http.ServerResponse, location: string, cookie?: string) => {
    response.writeHead(302, { location, ...(cookie ? { "set-cookie": cookie } : {}) });
    response.end();
  };
  const server = http.createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://shop.local");
    const sid = /(?:^|;\s*)sid=([a-f0-9]+)/.exec(request.headers.cookie ?? "")?.[1];
    const user = sid ? sessions.get(sid) : undefined;
    const route = `${request.method} ${url.pathname}`;
    if (route === "GET /login") {
      const next = url.searchParams.get("next") ?? "/";
      return html(
        response,
        200,
        `<form method="post" action="/login"><input name="username"><input type="password" name="password"><input type="hidden" name="next" value="${escapeHtml(next)}"><button>Sign in</button></form>`,
      );
    }
    if (route === "POST /login") {
      const form = await readForm(request);
      const name = form.get("username") as keyof typeof SHOP_USERS;
      const next = form.get("next") || "/";
      if (!SHOP_USERS[name] || SHOP_USERS[name].password !== form.get("password")) {
        return redirect(response, "/login?error=bad");
      }
      const id = randomBytes(8).toString("hex");
      sessions.set(id, name);
      const local = next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\");
      return redirect(response, options.vulnerable || local ? next : "/", `sid=${id}; Path=/; HttpOnly`);
    }
    if (route === "GET /continue") {
      const target = url.searchParams.get("to") ?? "/";
      let allowed = false;
      try {
        allowed = new URL(target, "https://shop.example.org/").host === "shop.example.org";
      } catch {
        allowed = false;
      }
      return redirect(response, allowed ? target : "/");
    }
    if (!user) return redirect(response, `/login?next=${encodeURIComponent(url.pathname)}`);
    if (route === "GET /")
      return html(response, 200, `<a href="/orders/new">Order</a> <a href="/orders/mine">Mine</a>`);
    if (route === "GET /orders/new") {
      return html(
        response,
        200,
        `<form method="post" action="/orders"><input type="email" name="mail" required><input name="note" required><input name="price" value="12€" readonly><button>Buy</button></form>`,
      );
    }
    if (route === "POST /orders") {
      if (SHOP_USERS[user].role !== "admin") return html(response, 403, "<p>admins only</p>");
      const form = await readForm(request);
      const [mail, note, price] = ["mail", "note", "price"].map((field) => form.get(field));
      if (!price) return html(response, 400, "<p>missing price</p>");
      if (!mail || !STRICT_EMAIL.test(mail)) return html(response, 400, "<p>invalid mail</p>");
      orders.push({ user, mail, note: note ?? "", price });
      return redirect(response, "/orders/mine");
    }
    if (route === "GET /orders/mine") {
      const rows = orders
        .filter((order) => order.user === user)
        .map((order) => {
          const shown = (value: string) => (options.vulnerable ? value : escapeHtml(value));
          return `<li>${shown(order.mail)} ${shown(order.note)} ${escapeHtml(order.price)}</li>`;
        });
      return html(response, 200, `<ul>${rows.join("")}</ul>`);
    }
    html(response, 404, "<p>not found</p>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    orders,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

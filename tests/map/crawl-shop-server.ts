import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

// A small server-rendered shop for the crawl tests: form sign-in with a CSRF token, a cookie session that
// is replaced on every signed-in page (the old cookie stops working at once), pages only members or admins
// are served, forms with typed inputs, and links that must never be followed (sign out, delete).

export interface ShopServer {
  baseUrl: string;
  /** Every request, as `METHOD /path?query`. */
  requests: string[];
  /** Sessions destroyed by a request to /logout. */
  loggedOut: number;
  /** Signs in through the login form like a browser: answers the session cookie. */
  signIn(username: string, password: string): Promise<string>;
  close(): Promise<void>;
}

const USERS: Record<string, { password: string; role: "member" | "admin" }> = {
  alice: { password: "alice-pw", role: "member" },
  adam: { password: "adam-pw", role: "admin" },
};

export async function startShopServer(): Promise<ShopServer> {
  const sessions = new Map<string, { user: string; csrf: string }>();
  const requests: string[] = [];
  const state = { loggedOut: 0 };

  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://shop.local");
    requests.push(`${request.method} ${url.pathname}${url.search}`);
    const sid = /(?:^|;\s*)sid=([^;]+)/.exec(request.headers.cookie ?? "")?.[1];
    const session = sid ? sessions.get(sid) : undefined;
    const role = session ? USERS[session.user]!.role : "anonymous";
    const headers: Record<string, string | string[]> = { "content-type": "text/html; charset=utf-8" };
    // A visitor cookie for everyone; a signed-in session is replaced on every page it is served.
    const cookies = ["lang=en; Path=/"];
    if (session && sid) {
      sessions.delete(sid);
      const fresh = randomBytes(12).toString("hex");
      sessions.set(fresh, session);
      cookies.push(`sid=${fresh}; Path=/; HttpOnly`);
    }
    headers["set-cookie"] = cookies;
    const send = (status: number, body: string): void => {
      response.writeHead(status, headers).end(`<!doctype html><html>${body}</html>`);
    };
    const redirect = (location: string): void => {
      response.writeHead(302, { ...headers, location }).end();
    };
    const nav = `
      <a href="/">Home</a> <a href="/products">Products</a> <a href="/products?page=2&sort=price">Page 2</a>
      ${role === "anonymous" ? '<a href="/login">Sign in</a>' : '<a href="/account">Account</a> <a href="/account/orders?status=open">Open orders</a> <a href="/logout">Sign out</a>'}
      ${role === "admin" ? '<a href="/admin/users">Users</a>' : ""}`;

    if (request.method === "POST" && url.pathname === "/login") {
      let body = "";
      request.on("data", (chunk) => {
        body += chunk;
      });
      request.on("end", () => {
        const form = new URLSearchParams(body);
        const user = USERS[form.get("username") ?? ""];
        if (!user || user.password !== form.get("password")) return redirect("/login?error=1");
        const fresh = randomBytes(12).toString("hex");
        sessions.set(fresh, { user: form.get("username")!, csrf: randomBytes(8).toString("hex") });
        headers["set-cookie"] = [`sid=${fresh}; Path=/; HttpOnly`];
        redirect("/");
      });
      return;
    }
    if (request.method !== "GET") return send(405, "<title>Not allowed</title>");
    const csrf = session?.csrf ?? "anon-token";
    switch (url.pathname) {
      case "/":
        return send(200, `<head><title>Shop</title></head><body>${nav}</body>`);
      case "/login":
        return send(
          200,
          `<head><title>Sign in</title><meta name="csrf-token" content="${csrf}"><meta name="csrf-param" content="_csrf"></head>
          <body>${nav}<form method="post" action="/login">
            <input type="hidden" name="_csrf" value="${csrf}">
            <input name="username" required autocomplete="username">
            <input type="password" name="password" required value="not-kept">
            <button type="submit">Sign in</button>
          </form></body>`,
        );
      case "/products":
        return send(
          200,
          `<head><title>Products</title></head><body>${nav}
          <form action="/products/search" method="get">
            <input type="search" name="q" maxlength="40">
            <select name="category"><option value="">Any</option><option value="books" selected>Books</option><option>Music</option></select>
            <input type="number" name="min_price" min="0" step="0.01">
            <input type="submit" value="Search">
          </form>
          <a href="/products/1">One</a> <a href="/products/2">Two</a></body>`,
        );
      case "/products/1":
      case "/products/2": {
        const id = url.pathname.split("/")[2];
        return send(
          200,
          `<head><title>Product ${id}</title></head><body>${nav}
          <form method="post" action="/cart">
            <input type="hidden" name="authenticity_token" value="${csrf}">
            <input type="hidden" name="product_id" value="${id}">
            <input type="number" name="quantity" min="1" max="10" value="1" required>
            <select name="size" required><option value="S">Small</option><option value="M">Medium</option><option value="L">Large</option></select>
            <input type="checkbox" name="gift" value="yes">
            <input type="radio" name="delivery" value="standard" checked><input type="radio" name="delivery" value="express">
            <input name="coupon" pattern="[A-Z]{4}[0-9]{2}" disabled>
            <button type="submit">Add to cart</button>
            <button type="submit" formaction="/wishlist" formmethod="post">Save for later</button>
          </form></body>`,
        );
      }
      case "/account":
      case "/account/orders":
        if (!session) return redirect("/login");
        return send(
          200,
          `<head><title>Account</title></head><body>${nav}
          <form method="post" action="/account/profile" enctype="multipart/form-data">
            <input type="hidden" name="csrfmiddlewaretoken" value="${csrf}">
            <input type="email" name="email" required value="${session.user}@shop.test">
            <textarea name="bio" maxlength="500">Hello
there</textarea>
            <input type="file" name="avatar">
            <input type="tel" name="phone" pattern="[0-9 +-]+">
            <button>Save</button>
          </form></body>`,
        );
      case "/admin/users":
        if (!session) return redirect("/login");
        if (role !== "admin") return send(403, "<title>Forbidden</title>");
        return send(
          200,
          `<head><title>Users</title></head><body>${nav}
          <a href="/admin/users/7/delete">Delete user 7</a>
          <form method="post" action="/admin/users/7/role">
            <input type="hidden" name="_token" value="${csrf}">
            <select name="role"><option>member</option><option>admin</option></select>
          </form></body>`,
        );
      case "/logout":
        if (sid) sessions.delete(sid);
        state.loggedOut += 1;
        return redirect("/");
      default:
        return send(404, "<title>Not found</title>");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    requests,
    get loggedOut() {
      return state.loggedOut;
    },
    async signIn(username, password) {
      const response = await fetch(`${baseUrl}/login`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ username, password }).toString(),
      });
      const cookie = response.headers.getSetCookie().find((line) => line.startsWith("sid="));
      if (!cookie) throw new Error(`sign-in as ${username} failed (${response.status})`);
      return cookie.split(";")[0]!;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

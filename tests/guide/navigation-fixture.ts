import http from "node:http";
import type { AddressInfo } from "node:net";

// A small shop rendered partly by the server and partly by a script, with one page of each kind GUIDE
// judges: pages nothing leads to, a page only a script-rendered menu links to, a page a form post redirects
// to, an API route, a page only a script mentions, pages with no way on and detail pages with a way back.

function page(title: string, body: string, head = ""): string {
  return `<!doctype html><html><head><title>${title}</title>${head}</head><body>${body}</body></html>`;
}

const NAV = `<nav><a href="/">Home</a> <a href="/products">Products</a> <a href="/orders">Orders</a> <a href="/help">Help</a></nav>`;

// The menu's link is assembled at run time, so only the rendered DOM shows where it goes.
const APP_JS = `
const menu = document.getElementById("menu");
const link = document.createElement("a");
link.href = "/" + ["re", "ports"].join("");
link.textContent = "Reports";
menu.appendChild(link);
// Settings are opened by a keyboard shortcut the script handles.
const SETTINGS = "/settings/advanced";
document.addEventListener("keydown", (event) => { if (event.key === "s" && event.altKey) location.href = SETTINGS; });
`;

const ROUTES: Record<string, () => { status?: number; type?: string; body: string; location?: string }> = {
  "/": () => ({
    body: page(
      "Shop",
      `${NAV}<div id="menu"></div><h1>Welcome</h1>`,
      `<script src="/app.js" defer></script>`,
    ),
  }),
  "/app.js": () => ({ type: "application/javascript", body: APP_JS }),
  "/products": () => ({
    body: page(
      "Products",
      `${NAV}<ul><li><a href="/products/1">Lamp</a></li><li><a href="/products/2">Desk</a></li></ul>`,
    ),
  }),
  "/products/1": () => ({ body: page("Lamp", `${NAV}<h1>Lamp</h1><a href="/products/1/print">Print</a>`) }),
  "/products/2": () => ({ body: page("Desk", `${NAV}<h1>Desk</h1><a href="/products/2/print">Print</a>`) }),
  "/products/1/print": () => ({
    body: page("Lamp", `<h1>Lamp</h1><p>12.00</p><a href="/products/1">Back</a>`),
  }),
  "/products/2/print": () => ({
    body: page("Desk", `<h1>Desk</h1><p>80.00</p><a href="/products/2">Back</a>`),
  }),
  "/products/1/history": () => ({
    body: page("Lamp changes", `${NAV}<h1>Price changes</h1><p>10.00 → 12.00</p>`),
  }),
  "/products/2/history": () => ({
    body: page("Desk changes", `${NAV}<h1>Price changes</h1><p>75.00 → 80.00</p>`),
  }),
  "/archive": () => ({ body: page("Archive", `${NAV}<h1>Archived products</h1>`) }),
  "/reports": () => ({ body: page("Reports", `${NAV}<h1>Reports</h1>`) }),
  "/settings/advanced": () => ({ body: page("Settings", `${NAV}<h1>Advanced settings</h1>`) }),
  "/orders": () => ({
    body: page(
      "Orders",
      `${NAV}<a href="/receipts/7">Receipt 7</a> <a href="/receipts/8">Receipt 8</a> <a href="/notices/3">Notice</a> <a href="/labels/7" target="_blank">Label</a> <a href="/invoices/5">Invoice</a>`,
    ),
  }),
  "/receipts/7": () => ({ body: page("Receipt", `<h1>Receipt 7</h1><p>Total 12.00</p>`) }),
  "/receipts/8": () => ({ body: page("Receipt", `<h1>Receipt 8</h1><p>Total 80.00</p>`) }),
  "/labels/7": () => ({ body: page("Label", `<pre>SHIP TO: 7</pre>`) }),
  // A dead end whose second record's page no link in the UI leads to: the crawl mapped it.
  "/invoices/5": () => ({ body: page("Invoice", `<h1>Invoice 5</h1><p>Due 12.00</p>`) }),
  "/invoices/6": () => ({ body: page("Invoice", `<h1>Invoice 6</h1><p>Due 80.00</p>`) }),
  "/notices/3": () => ({
    body: page("Notice", `<h1>Notice</h1><button onclick="history.back()">Back</button>`),
  }),
  "/help": () => ({
    body: page(
      "Help",
      `${NAV}<form method="post" action="/feedback"><textarea name="text"></textarea><button>Send</button></form>`,
    ),
  }),
  "/feedback/thanks": () => ({ body: page("Thanks", `${NAV}<h1>Thank you</h1>`) }),
  "/api/stats": () => ({ type: "application/json", body: JSON.stringify({ products: 2 }) }),
  "/login": () => ({
    body: page(
      "Sign in",
      `<form method="post"><input name="user"><input type="password" name="password"></form>`,
    ),
  }),
};

export interface FixtureServer {
  baseUrl: string;
  requests: string[];
  close(): Promise<void>;
}

export async function startShop(): Promise<FixtureServer> {
  const requests: string[] = [];
  const server = http.createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0] as string;
    requests.push(`${request.method} ${path}`);
    if (request.method === "POST" && path === "/feedback") {
      response.writeHead(303, { location: "/feedback/thanks" }).end();
      return;
    }
    const route = ROUTES[path];
    if (!route) {
      response.writeHead(404, { "content-type": "text/html" }).end(page("Not found", "<h1>Not found</h1>"));
      return;
    }
    const answer = route();
    response
      .writeHead(answer.status ?? 200, { "content-type": answer.type ?? "text/html; charset=utf-8" })
      .end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Every GET page template the map would know from the application's source. */
export const SOURCE_TEMPLATES = [
  "/",
  "/products",
  "/products/{id}",
  "/products/{id}/print",
  "/products/{id}/history",
  "/archive",
  "/reports",
  "/settings/advanced",
  "/orders",
  "/receipts/{id}",
  "/invoices/{id}",
  "/notices/{id}",
  "/labels/{id}",
  "/help",
  "/feedback/thanks",
  "/api/stats",
  "/login",
  "/admin/{tenant}/audit",
];

import http from "node:http";
import type { AddressInfo } from "node:net";

// A small local site for the walker and CLI tests: an entry page linking to a settings page, a page that
// lacks the text a charter expects, a page that fails with a server error, and a form that creates a record.

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><title>${title}</title></head><body>${body}</body></html>`;

export interface ExploreSite {
  baseUrl: string;
  close(): Promise<void>;
}

export async function startExploreSite(): Promise<ExploreSite> {
  const notes: string[] = [];
  const server = http.createServer((request, response) => {
    const url = request.url ?? "/";
    const html = (title: string, body: string, status = 200) =>
      response.writeHead(status, { "content-type": "text/html" }).end(page(title, body));
    if (request.method === "POST" && url === "/notes") {
      let body = "";
      request.on("data", (chunk) => {
        body += chunk;
      });
      request.on("end", () => {
        notes.push(new URLSearchParams(body).get("title") ?? "");
        response.writeHead(303, { location: `/notes/${notes.length}` }).end();
      });
      return;
    }
    if (url === "/" || url === "/health") {
      html(
        "Home",
        `<h1>Home</h1><nav><a href="/settings">Settings</a> <a href="/about">About</a></nav>
         <footer><a href="/settings">Settings</a></footer>`,
      );
    } else if (url === "/settings") {
      html("Settings", "<h1>Settings</h1><p>Notifications</p>");
    } else if (url === "/about") {
      html("About", "<h1>About</h1><p>Who we are</p>");
    } else if (url === "/notes/new") {
      html(
        "New note",
        `<form method="post" action="/notes"><label>Title <input name="title"></label><button>Create note</button></form>`,
      );
    } else if (/^\/notes\/\d+$/.test(url)) {
      html("Note", `<h1>${notes[Number(url.split("/")[2]) - 1] ?? ""}</h1>`);
    } else if (url === "/report") {
      html("Error", "<h1>Internal error</h1>", 500);
    } else html("Not found", "<h1>Not found</h1>", 404);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

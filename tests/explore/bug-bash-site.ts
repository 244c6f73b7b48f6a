import http from "node:http";
import type { AddressInfo } from "node:net";

// A small local site for the bug-bash tests: a page that always fails with a server error (a real
// defect), a status page that is still starting on its first visit only (a candidate that does not
// reproduce), and a plain page with several texts (enough moves to run a session out of steps).

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><title>${title}</title></head><body>${body}</body></html>`;

export interface BugBashSite {
  baseUrl: string;
  /** GETs of each path, as the site saw them. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

export async function startBugBashSite(): Promise<BugBashSite> {
  const hits = new Map<string, number>();
  const server = http.createServer((request, response) => {
    const url = (request.url ?? "/").split("?")[0]!;
    hits.set(url, (hits.get(url) ?? 0) + 1);
    const html = (title: string, body: string, status = 200) =>
      response.writeHead(status, { "content-type": "text/html" }).end(page(title, body));
    if (url === "/" || url === "/health") {
      html(
        "Home",
        `<h1>Home</h1><nav><a href="/figures">Monthly figures</a> <a href="/about">About</a></nav>`,
      );
    } else if (url === "/figures") {
      html("Error", "<h1>Internal error</h1>", 500);
    } else if (url === "/about") {
      html("About", "<h1>About us</h1><p>Team</p><p>Contact</p><p>History</p>");
    } else if (url === "/status") {
      // Not linked from anywhere: only a charter that names it opens it.
      html("Status", (hits.get(url) ?? 0) <= 1 ? "<p>Starting</p>" : "<p>Ready</p>");
    } else html("Not found", "<h1>Not found</h1>", 404);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { Operation } from "../../src/map/system-map.ts";
import { authzFindings } from "../fixtures/authz-run.ts";

// A server-rendered application whose only way to learn a record's id is its list page: `/journal/` links
// each of the caller's entries (`<a href="/journal/12/">`), nothing answers JSON and nothing may be created
// through an API. `flawed` shows any entry to any signed-in user; `sound` answers 404 for another's. The
// `pages` style is the same application as server pages: `/entries.php` links `/view_entry.php?id=12`.

const TOKENS: Record<string, string> = { "token-ada": "ada", "token-ben": "ben" };
const ENTRIES = [
  { id: 12, owner: "ada", title: "Ada's garden plans", body: "Tomatoes along the south fence" },
  { id: 31, owner: "ben", title: "Ben's reading list", body: "Three novels before June" },
];

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

type Style = "paths" | "pages";
const LIST = { paths: "/journal/", pages: "/entries.php" };
const itemUrl = (style: Style, id: number | string) =>
  style === "paths" ? `/journal/${id}/` : `/view_entry.php?id=${id}`;

async function startJournal(build: "flawed" | "sound", style: Style): Promise<string> {
  const server = http.createServer((request, response) => {
    const caller = TOKENS[(request.headers.authorization ?? "").replace(/^Bearer\s+/i, "")];
    const page = (status: number, body: string) => {
      response.writeHead(status, { "content-type": "text/html; charset=utf-8" });
      response.end(
        `<!doctype html><html><body><nav><a href="/journal/">Journal</a></nav>${body}</body></html>`,
      );
    };
    if (!caller) return page(403, "<h1>Sign in first</h1>");
    const url = new URL(request.url ?? "/", "http://fixture.invalid");
    if (url.pathname === LIST[style]) {
      const own = ENTRIES.filter((entry) => entry.owner === caller);
      return page(
        200,
        `<h1>My journal</h1><ul>${own.map((entry) => `<li><a href="${itemUrl(style, entry.id)}">${entry.title}</a></li>`).join("")}</ul>`,
      );
    }
    const item =
      style === "paths"
        ? url.pathname.match(/^\/journal\/(\d+)\/$/)
        : url.pathname === "/view_entry.php" && [url.pathname, url.searchParams.get("id") ?? ""];
    const entry = item && ENTRIES.find((candidate) => candidate.id === Number(item[1]));
    if (!entry || (build === "sound" && entry.owner !== caller)) return page(404, "<h1>Not found</h1>");
    return page(200, `<main><h1>${entry.title}</h1><p>${entry.body}</p></main>`);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function pageOperation(path: string, query?: string): Operation {
  return {
    method: "GET",
    path,
    security: "unknown",
    parameters: [
      ...(path.includes("{entry}")
        ? [{ name: "entry", in: "path", required: true, schema: { type: "integer" } }]
        : []),
      ...(query ? [{ name: query, in: "query", required: true, schema: { type: "string" } }] : []),
    ],
    responses: {},
    seen_in: ["source", "link"],
    documented: false,
  } as Operation;
}

async function leaks(build: "flawed" | "sound", style: Style = "paths"): Promise<string[]> {
  return authzFindings(
    "journal",
    await startJournal(build, style),
    style === "paths"
      ? [pageOperation("/journal/"), pageOperation("/journal/{entry}/")]
      : [pageOperation("/entries.php"), pageOperation("/view_entry.php", "id")],
  );
}

describe("authz_matrix on records a server-rendered list links to", () => {
  it("takes the owner's ids from the links of its list page and finds another user reading them", async () => {
    expect(await leaks("flawed")).toContain("missing-authorization GET /journal/{entry}/");
  });

  it("reports nothing when each user reads only their own entries", async () => {
    expect(await leaks("sound")).toEqual([]);
  });

  it("reads the id a server page's link puts in the query of the page named for the item", async () => {
    expect(await leaks("flawed", "pages")).toContain("missing-authorization GET /view_entry.php");
    expect(await leaks("sound", "pages")).toEqual([]);
  });
});

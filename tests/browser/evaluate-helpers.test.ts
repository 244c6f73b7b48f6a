import { execFile } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BrowserSession } from "../../src/probes/browser/browser-session.ts";

// qaas runs through tsx, whose transform wraps every named inner function in a `__name(…)` call to a
// helper the page does not have. Functions handed to page.evaluate with a named helper inside (the
// overflow measure, the control finder) threw in the page and their probes saw nothing, under the CLI
// only: vitest's transform keeps no names. Every context qaas opens now gives pages that helper.

const run = promisify(execFile);

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Board</title></head>
<body><main><h1>Board</h1><div style="width:1100px">Wide</div><button type="button">Refresh</button></main></body></html>`;

let server: http.Server;
let baseUrl: string;

beforeAll(async () => {
  server = http.createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe("functions sent to a page", () => {
  it("may call the name-keeping helper tsx's transform inserts", async () => {
    const session = new BrowserSession();
    try {
      const { page } = await session.newPage(
        await session.context({ role: "anonymous", headers: async () => ({}) }, baseUrl),
      );
      await page.goto(`${baseUrl}/`);
      // What tsx makes of `() => { const twice = (x) => x * 2; return twice(21); }`.
      const answer = await page.evaluate(
        "(() => { const twice = __name((x) => x * 2, 'twice'); return [twice(21), twice.name]; })()",
      );
      expect(answer).toEqual([42, "twice"]);
    } finally {
      await session.close();
    }
  }, 60_000);

  it("measure the page when qaas runs through tsx, as the CLI does", async () => {
    const { stdout } = await run(
      process.execPath,
      ["--import", "tsx", path.join(import.meta.dirname, "fixtures", "measure-under-tsx.ts"), `${baseUrl}/`],
      { timeout: 60_000 },
    );
    const seen = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
    expect(seen.overflow?.scrollWidth).toBeGreaterThan(1000);
    expect(seen.controls.map((control: { name: string }) => control.name)).toEqual(["Refresh"]);
  }, 90_000);
});

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM_ARGS, findChromium } from "../../src/probes/traffic/chromium.ts";
import { renderHtml } from "../../src/report/render-html.ts";
import { loadReportModel } from "../../src/report/report-model.ts";
import { PAYLOAD, type TwoRuns, twoRuns } from "./report-fixtures.ts";

// The HTML report opened in the real Chromium: it must render with no console error, request nothing
// from the network, and show a finding's script payload as text rather than run it.

let runs: TwoRuns;
let html = "";
let file = "";
beforeAll(() => {
  runs = twoRuns();
  html = renderHtml(loadReportModel(runs.home, runs.secondRun));
  file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "qaas-html-")), "report.html");
  fs.writeFileSync(file, html);
});

describe("the HTML report", () => {
  it("is self-contained: no script element, no external URL outside the escaped run text", () => {
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/(src|href)\s*=\s*"(?!data:)/i);
    expect(html).not.toMatch(/<link\b/i);
    expect(html).toContain("default-src 'none'");
    expect(html).toContain(`&lt;script&gt;alert(&quot;qaas&quot;)&lt;/script&gt;`);
    expect(html).toContain('src="data:image/png;base64,');
    expect(html).toContain("<svg");
  });

  describe("in Chromium", () => {
    let browser: import("playwright-core").Browser | undefined;
    afterAll(async () => {
      await browser?.close();
    });

    it("renders with no console error and no request, the payload shown as text", async () => {
      const { chromium } = await import("playwright-core");
      browser = await chromium.launch({
        executablePath: findChromium(),
        args: CHROMIUM_ARGS,
        timeout: 30_000,
      });
      const page = await browser.newPage();
      const problems: string[] = [];
      const requests: string[] = [];
      page.on("console", (message) => {
        if (message.type() === "error" || message.type() === "warning") problems.push(message.text());
      });
      page.on("pageerror", (error) => problems.push(error.message));
      page.on("request", (request) => {
        if (request.url() !== `file://${file}` && !request.url().startsWith("data:"))
          requests.push(request.url());
      });
      await page.goto(`file://${file}`, { waitUntil: "load" });
      expect(await page.evaluate(() => document.querySelectorAll("script").length)).toBe(0);
      expect(await page.evaluate(() => (window as unknown as { qaasRan?: boolean }).qaasRan ?? false)).toBe(
        false,
      );
      const title = await page.locator("#env-xss summary").textContent();
      expect(title ?? "").toContain(`Search reflects ${PAYLOAD} unescaped`);
      const image = page.locator("#env-xss img");
      expect(await image.evaluate((element) => (element as HTMLImageElement).naturalWidth)).toBe(1);
      expect(await page.locator("svg rect").count()).toBeGreaterThan(3);
      const headings = await page.locator("h2").allInnerTexts();
      expect(headings).toEqual([
        "Summary",
        "Since the previous run",
        "Trend",
        "Findings",
        "Agents",
        "What the run could not reach",
        "Spend",
      ]);
      expect(problems).toEqual([]);
      expect(requests).toEqual([]);
    }, 60_000);
  });
});

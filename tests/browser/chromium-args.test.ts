import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM_ARGS, findChromium } from "../../src/probes/traffic/chromium.ts";

// qaas's own --disable-features switch comes after playwright-core's, and Chromium keeps only the last: it
// must carry every feature playwright-core turns off, and it must keep the address bar's preloaded WebUI
// popups (a renderer per window, working on every navigation) from being created at all. The command line
// is read from the browser process itself: the headless shell qaas prefers serves no chrome:// pages.

let server: import("playwright-core").BrowserServer;
let browser: import("playwright-core").Browser;
beforeAll(async () => {
  const { chromium } = await import("playwright-core");
  server = await chromium.launchServer({
    executablePath: findChromium(),
    args: CHROMIUM_ARGS,
    timeout: 30_000,
  });
  browser = await chromium.connect(server.wsEndpoint());
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

function disabledFeatureSwitches(commandLine: string[]): string[][] {
  return commandLine
    .filter((argument) => argument.startsWith("--disable-features="))
    .map((argument) => argument.slice("--disable-features=".length).split(","));
}

describe("Chromium's launch switches", () => {
  it("keep every feature playwright-core disables in the one switch Chromium reads", () => {
    const pid = server.process().pid;
    const commandLine = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
    const switches = disabledFeatureSwitches(commandLine);
    expect(switches.length).toBeGreaterThanOrEqual(2);
    const playwrights = switches[0] ?? [];
    const effective = switches.at(-1) ?? [];
    expect(playwrights).toContain("PaintHolding");
    expect(playwrights.filter((feature) => !effective.includes(feature))).toEqual([]);
    expect(effective).toContain("WebUIOmniboxPopup");
  });

  it("leave no hidden browser-UI page running beside the tabs", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto("data:text/html,<p>a page</p>");
    const cdp = await browser.newBrowserCDPSession();
    const { targetInfos } = (await cdp.send("Target.getTargets", { filter: [{}] })) as {
      targetInfos: Array<{ type: string; url: string }>;
    };
    await cdp.detach();
    await context.close();
    expect(targetInfos.some((target) => target.type === "page")).toBe(true);
    expect(
      targetInfos.filter((target) => target.url.includes("top-chrome")).map((target) => target.url),
    ).toEqual([]);
  });
});

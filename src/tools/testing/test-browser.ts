import { type BrowserServer, chromium } from "playwright-core";
import { CHROMIUM_ARGS, findChromium } from "../../probes/traffic/chromium.ts";
import type { ToolContext } from "../context.ts";
import { onRunEnd } from "../run-end.ts";

// Generated browser tests launch a Chromium of their own, which is how a person runs one. When qaas runs
// them (three runs per reproduction, again to verify a fix) each launch costs a second or more on a busy
// machine, so the run keeps one browser server for its tests and they connect to it (`QAAS_BROWSER_WS`),
// each in a fresh context of its own: nothing a test does is seen by the next.

const KEY = "test_runner:browser-server";

/** The endpoint of the run's browser server for tests, started on first use; undefined when none can start. */
export async function testBrowserEndpoint(context: ToolContext): Promise<string | undefined> {
  let server = context.shared.get(KEY) as Promise<BrowserServer | undefined> | undefined;
  if (!server) {
    server = launch();
    context.shared.set(KEY, server);
    const starting = server;
    onRunEnd(context, async () => {
      await (await starting)?.close();
    });
  }
  return (await server)?.wsEndpoint();
}

async function launch(): Promise<BrowserServer | undefined> {
  try {
    return await chromium.launchServer({
      executablePath: findChromium(),
      args: CHROMIUM_ARGS,
      timeout: 30_000,
    });
  } catch {
    // Each test then launches its own browser, and says why it could not if that fails too.
    return undefined;
  }
}

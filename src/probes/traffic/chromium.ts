import fs from "node:fs";
import path from "node:path";
import type { BrowserContext } from "playwright-core";
import { QaasError } from "../../errors.ts";

// The system's Chromium (Debian's package), driven by playwright-core: no browser download, ever.

// Chromium's headless shell first: the browser without its desktop UI, which qaas never shows. On the demo's
// browser pass it used half the CPU of the full browser in headless mode, for the same pages and findings.
// Debian's package puts the binary under /usr/lib (/usr/bin holds a shell wrapper around it).
const HEADLESS_SHELLS = ["/usr/lib/chromium/chromium-headless-shell", "/usr/bin/chromium-headless-shell"];
const CANDIDATES = [
  ...HEADLESS_SHELLS,
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/snap/bin/chromium",
];
const ON_PATH = [
  "chromium-headless-shell",
  "chromium",
  "chromium-browser",
  "google-chrome",
  "google-chrome-stable",
];

// Chromium keeps only the last --disable-features switch of its command line, so ours carries the list
// playwright-core passes before it (its chromiumSwitches, as of 1.65; a test compares the two).
const PLAYWRIGHT_DISABLED_FEATURES = [
  "AvoidUnnecessaryBeforeUnloadCheckSync",
  "DestroyProfileOnBrowserClose",
  "HttpsUpgrades",
  "HttpsFirstBalancedModeAutoEnable",
  "LensOverlay",
  "MediaRouter",
  "PaintHolding",
  "ThirdPartyStoragePartitioning",
  "AvoidCorsURLLoaderRestartOnRedirect",
  "TcpPortRandomizationWin",
  "OptimizationHints",
  "NetworkTimeServiceQuerying",
  "AimEnabled",
  "PreconnectToSearch",
  "msForceBrowserSignIn",
  "msEdgeUpdateLaunchServicesPreferredVersion",
];

// Recent Chromium builds the address bar's popups as WebUI pages preloaded for every window, even headless:
// a renderer per window that works on every navigation. On the demo's nightly they were a quarter of all
// the CPU Chromium used, for a window nobody sees.
const HEADLESS_UNUSED_FEATURES = ["WebUIOmniboxPopup", "WebUIOmniboxAimPopup"];

/** Headless flags that work as root in a container (no sandbox, no GPU, nothing phoning home). */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  `--disable-features=${[...PLAYWRIGHT_DISABLED_FEATURES, ...HEADLESS_UNUSED_FEATURES].join(",")}`,
];

/** `$QAAS_CHROMIUM`, else the usual install paths (the headless shell first), else the first Chromium on PATH. */
export function findChromium(env: NodeJS.ProcessEnv = process.env, installPaths = CANDIDATES): string {
  const configured = env.QAAS_CHROMIUM?.trim();
  if (configured) {
    if (isExecutable(configured)) return configured;
    throw new QaasError(
      "CHROMIUM_MISSING",
      `QAAS_CHROMIUM is ${configured}, which is not an executable file; point it at Chromium or unset it`,
    );
  }
  for (const candidate of installPaths) if (isExecutable(candidate)) return candidate;
  const folders = (env.PATH ?? "").split(path.delimiter).filter(Boolean);
  for (const name of ON_PATH) {
    for (const folder of folders) {
      const candidate = path.join(folder, name);
      if (isExecutable(candidate)) return candidate;
    }
  }
  throw new QaasError(
    "CHROMIUM_MISSING",
    `no Chromium found (looked at $QAAS_CHROMIUM, ${installPaths.join(", ")} and PATH): install it with \`apt-get install -y chromium-headless-shell\` (or chromium), or set QAAS_CHROMIUM to its path`,
  );
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * What every browser context qaas opens runs before a page's own scripts. qaas runs as TypeScript through
 * tsx, whose esbuild transform keeps function names by wrapping each named inner function in a call to a
 * module-level `__name` helper. A function handed to `page.evaluate` is sent to the page as its source
 * text, without that helper, so any one with a named helper inside (`const describe = (element) => …`)
 * throws "__name is not defined" in the page, and the probe that called it silently sees nothing. The
 * page gets an equivalent helper, defined only where the page has none, writable so a page bundle that
 * brings its own keeps it.
 */
export const EVALUATE_HELPERS = `(() => {
  if (typeof globalThis.__name === "function") return;
  Object.defineProperty(globalThis, "__name", {
    value: (target, value) => {
      try { Object.defineProperty(target, "name", { value, configurable: true }); } catch {}
      return target;
    },
    writable: true,
    configurable: true,
    enumerable: false,
  });
})();`;

/** Makes functions qaas sends to `page.evaluate` run in every page of `context` (see EVALUATE_HELPERS). */
export async function prepareContext(context: BrowserContext): Promise<void> {
  await context.addInitScript({ content: EVALUATE_HELPERS });
}

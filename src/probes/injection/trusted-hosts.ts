import fs from "node:fs";
import path from "node:path";
import type { Operation } from "../../map/system-map.ts";
import type { ProbeRun } from "../session/probe-run.ts";

// The hosts an application trusts as its own, for redirect checks that only ask whether such a host appears
// somewhere in the address (`"app.example" in url`, `url.startswith("https://app.example")`). A tester finds
// them where the application names them: the host it is served from, and host names written in the
// handler's own source (a production domain in a check or an allow-list). Bypasses then put that host where
// it does not decide where the browser goes — userinfo, a subdomain of another host, a query or a fragment.

const HANDLER_LINES_BEFORE = 3;
const HANDLER_LINES_AFTER = 40;
const MAX_HOSTS = 4;
const MAX_SOURCE_BYTES = 512_000;

// A quoted literal that is a host name (optionally a URL's origin): letters in the last label, no file name.
const QUOTED_HOST =
  /["'`](?:https?:\/\/)?((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{1,62})(?::\d{1,5})?\/?["'`]/gi;
const FILE_SUFFIX =
  /\.(py|pyc|js|mjs|cjs|ts|tsx|jsx|json|ya?ml|html?|css|txt|md|xml|csv|png|jpe?g|gif|svg|ico|db|sqlite|sql|env|cfg|ini|conf|log|lock|map|php|rb|go|java|cs|sh|pem|key|crt|zip|gz|tar|pdf)$/i;
// Dotted names that are code, not hosts: module paths and attribute chains. (Not `app.`: app.<domain> is
// the commonest name of a web application's own host.)
const CODE_NAME = /^(os|sys|self|this|request|req|res|flask|django|express|node|window|document|module)\./i;

/** Host names written as string literals in a source text, in order of appearance. */
export function hostLiterals(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(QUOTED_HOST)) {
    const host = match[1]!.toLowerCase();
    if (FILE_SUFFIX.test(host) || CODE_NAME.test(host) || found.includes(host)) continue;
    found.push(host);
  }
  return found;
}

/** The lines around an operation's handler, when a route reader found it in the target's source. */
function handlerText(run: ProbeRun, operation: Operation): string | undefined {
  const root = run.context.target?.root;
  const file = operation.handler?.file;
  if (!root || !file) return undefined;
  const absolute = path.resolve(root, file);
  if (path.relative(root, absolute).startsWith("..")) return undefined;
  try {
    const stat = fs.statSync(absolute);
    if (!stat.isFile() || stat.size > MAX_SOURCE_BYTES) return undefined;
    const lines = fs.readFileSync(absolute, "utf8").split("\n");
    const line = operation.handler?.line;
    if (!line) return lines.length <= 200 ? lines.join("\n") : undefined;
    return lines
      .slice(Math.max(0, line - 1 - HANDLER_LINES_BEFORE), line - 1 + HANDLER_LINES_AFTER)
      .join("\n");
  } catch {
    return undefined;
  }
}

/**
 * Hosts the application may check a redirect address against: the host it was reached on, the profile's
 * base URL host, and host names its handler's source writes. At most a few, the served host first.
 */
export function trustedHosts(run: ProbeRun, operation: Operation, requestUrl: string): string[] {
  const hosts: string[] = [];
  const add = (host: string | undefined) => {
    if (host && !hosts.includes(host)) hosts.push(host);
  };
  const hostOf = (url: string) => {
    try {
      return new URL(url).hostname.toLowerCase();
    } catch {
      return undefined;
    }
  };
  add(hostOf(requestUrl));
  add(hostOf(run.target.baseUrl));
  const text = handlerText(run, operation);
  for (const host of text ? hostLiterals(text) : []) add(host);
  return hosts.slice(0, MAX_HOSTS);
}

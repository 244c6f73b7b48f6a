import { pathsMatch, splitEndpoint } from "../../score/match-location.ts";
import type { TargetProfile } from "../../targets/profile-schema.ts";
import { stateResetReason } from "./state-reset.ts";

// The profile names operations as the ledger does (`GET /reports/{id}`), and a probe sends concrete URLs
// (`/reports/17`, `/difficulty/hard`). A template segment stands for any one value, numeric or not: an
// exclusion that only caught ids would let a probe through to every other value of the parameter.

/** Whether a request is one of the profile's endpoints (`METHOD /path`, templates allowed). */
export type EndpointMatcher = (method: string, url: string) => boolean;

export function profileEndpoints(entries: readonly string[] | undefined): EndpointMatcher {
  const endpoints = (entries ?? []).flatMap((entry) => {
    const endpoint = splitEndpoint(entry);
    return endpoint ? [endpoint] : [];
  });
  if (endpoints.length === 0) return () => false;
  return (method, url) => {
    const upper = method.toUpperCase();
    const path = new URL(url, "http://target.invalid").pathname;
    return endpoints.some((endpoint) => endpoint.method === upper && pathsMatch(path, endpoint.path));
  };
}

/** Why a `METHOD url` may never be sent: the profile excludes the operation (a sign-out, a test reset). */
export function excludedBy(
  exclude: readonly string[] | undefined,
): ((method: string, url: string) => string | undefined) | undefined {
  if (!exclude || exclude.length === 0) return undefined;
  const excluded = profileEndpoints(exclude);
  return (method, url) =>
    excluded(method, url)
      ? `${method.toUpperCase()} ${new URL(url).pathname} is excluded by the profile (api.exclude): no probe may send it`
      : undefined;
}

/**
 * Why a `METHOD url` may never be sent to this target: the profile excludes the operation, the profile's
 * reset command calls it (`curl http://127.0.0.1:5000/reset`), or it is named like a route that rebuilds
 * the app's data (`/createdb`, a "start over" link; see state-reset.ts) — any of them would wipe the data
 * every agent of the run created and measures. Every sender that is not the run's HTTP client (page
 * fetchers, the traffic recorder, the browser) asks this before sending.
 */
export function forbiddenRequests(
  profile: Pick<TargetProfile, "api" | "environment"> | undefined,
): (method: string, url: string) => string | undefined {
  const excluded = excludedBy(profile?.api?.exclude);
  const resets = resetPaths(profile);
  return (method, url) => {
    const path = new URL(url, "http://target.invalid").pathname;
    if (resets.some((reset) => pathsMatch(path, reset)))
      return `${method.toUpperCase()} ${path} is what the profile's reset command calls (environment.reset): no probe may send it`;
    return excluded?.(method, url) ?? stateResetReason(url);
  };
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "0.0.0.0", "[::1]"]);

/** Paths on the target that the reset command's URLs name (same port; loopback names are one host). */
export function resetPaths(profile: Pick<TargetProfile, "environment"> | undefined): string[] {
  const environment = profile?.environment;
  const command = [environment?.reset?.command, ...Object.values(environment?.reset?.env ?? {})].join(" ");
  if (!environment?.base_url || !command.includes("://")) return [];
  const base = new URL(environment.base_url);
  const sameHost = (host: string) =>
    host === base.hostname || (LOOPBACK.has(host) && LOOPBACK.has(base.hostname));
  const paths: string[] = [];
  for (const match of command.matchAll(/https?:\/\/[^\s'"`)]+/g)) {
    const url = URL.canParse(match[0]) ? new URL(match[0]) : undefined;
    if (!url || url.port !== base.port || !sameHost(url.hostname)) continue;
    if (url.pathname !== "/" && !paths.includes(url.pathname)) paths.push(url.pathname.replace(/\/+$/, ""));
  }
  return paths;
}

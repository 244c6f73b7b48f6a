import { pathsMatch, splitEndpoint } from "../../score/match-location.ts";

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

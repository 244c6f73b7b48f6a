import type { Denial, GuardScope } from "./scope.ts";
import { deny, quote } from "./scope.ts";

// external-writes: probes touch only the target (the origin of its base_url; another host, even a
// loopback one, is refused), and a target running `external` — someone else's environment, never reset
// — is only read unless its profile says `allow_writes: true`.

const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
const SAME_SCHEME: Record<string, string> = { "ws:": "http:", "wss:": "https:" };

function originOf(url: URL): string {
  return `${SAME_SCHEME[url.protocol] ?? url.protocol}//${url.host}`;
}

export function judgeHttpRequest(method: string, url: string, scope: GuardScope): Denial | undefined {
  const { agent, target } = scope;
  const environment = target?.profile.environment;
  const shown = quote(`${String(method)} ${String(url)}`);
  if (environment?.base_url === undefined) {
    return deny(
      "external-writes",
      `${agent.name} may not send ${shown}: the target declares no base_url, and probes only ever touch the target. Probe the code instead, or add environment.base_url to the target profile.`,
    );
  }
  const base = new URL(environment.base_url);
  let requested: URL;
  try {
    requested = new URL(String(url), base);
  } catch {
    return deny(
      "external-writes",
      `${agent.name} may not send ${shown}: it is not a valid URL. Use a path of the target such as "/health".`,
    );
  }
  if (originOf(requested) !== originOf(base)) {
    return deny(
      "external-writes",
      `${agent.name} may not send ${shown}: it goes to ${requested.origin}, not the target (${base.origin}), and probes only touch the target. Send it to a path of ${base.origin} instead.`,
    );
  }
  const verb = String(method).trim().toUpperCase();
  if (environment.mode === "external" && !environment.allow_writes && !READ_METHODS.has(verb)) {
    return deny(
      "external-writes",
      `${agent.name} may not send ${shown}: the target is an external environment that is never reset, and its profile does not allow writes (allow_writes: false). Use GET, HEAD or OPTIONS, or report the write you would need to test.`,
    );
  }
  return undefined;
}

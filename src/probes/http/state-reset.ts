// A route that rebuilds or re-seeds the application's database (`/createdb`, `/init-db`, `/reset-data`,
// `/seed`, a "start over" or "rollback" link in a training app's menu, `/reset-all`) wipes every object the
// run created and every account it registered, whatever the method: many demo and test apps expose one as
// a plain GET. Sending it breaks the harmless-probe rule (it destroys data the probe did not create) and
// every stateful check after it, so no sender of the run sends one (forbiddenRequests).

const RESET_SEGMENT =
  /^(?:(?:create|init|initiali[sz]e|reset|re-?seed|seed|populate|drop|wipe|rebuild|recreate|setup)[-_]?(?:db|database|data|tables?|schema)|(?:reset|wipe|purge|clear|delete|erase)[-_]?(?:all|everything|app|application|demo|state)|createdb|initdb|resetdb|dropdb|populate|reseed|factory[-_]?reset|start[-_]?over|roll[-_]?back)(?:\.[a-z]{2,5})?$/i;

/** Why `url` would reset the application's data, or undefined when it would not. */
export function stateResetReason(url: string): string | undefined {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    path = url.split(/[?#]/)[0] ?? url;
  }
  const segment = path
    .split("/")
    .filter(Boolean)
    .find((part) => RESET_SEGMENT.test(safeDecode(part)));
  return segment
    ? `"${safeDecode(segment)}" looks like a route that resets the application's data`
    : undefined;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

import type { BrowsingRole } from "./browser-session.ts";

// A generated browser repro test signs in only through its environment: QAAS_COOKIE (the Cookie header of
// the role's session) and QAAS_HEADERS (the other headers the sign-in layer sends, a bearer token say, as
// JSON; the test sends them to the target's origin only). Run without them (REPRODUCER reproducing a
// finding, a bug-bash candidate being confirmed), a signed-in page's test stops in its set-up and a real
// defect goes unreproduced.

/**
 * Which role a generated test browses as: its `ROLE` constant, or (a test generated before it had one) the
 * argument of its `needsCookie(...)` set-up calls.
 */
export function roleOfTest(source: string): string | undefined {
  const role =
    /^const ROLE = ("(?:[^"\\]|\\.)*");$/m.exec(source)?.[1] ??
    /needsCookie\(("(?:[^"\\]|\\.)*")\)/.exec(source)?.[1];
  return role === undefined ? undefined : (JSON.parse(role) as string);
}

/** Which profile user a generated HTTP test sends its request as: its `USER` constant, if it has one. */
export function userOfTest(source: string): string | undefined {
  const user = /^const USER = ("(?:[^"\\]|\\.)*");$/m.exec(source)?.[1];
  return user === undefined ? undefined : (JSON.parse(user) as string);
}

/**
 * The environment that gives a test `role`'s session, from the run's sign-in layer (`roles`). Empty for
 * the anonymous role or a role the run cannot sign in as (the test then says so itself).
 */
export async function roleSessionEnv(
  roles: readonly BrowsingRole[],
  role: string | undefined,
): Promise<Record<string, string>> {
  if (role === undefined || role === "anonymous") return {};
  const browsing = roles.find((each) => each.role === role);
  if (!browsing) return {};
  let headers: Record<string, string>;
  try {
    headers = await browsing.headers();
  } catch {
    // A role that cannot sign in now: the test runs without a session and says so (an environment reason).
    return {};
  }
  const env: Record<string, string> = {};
  const others: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === "cookie") env.QAAS_COOKIE = value;
    else others[name.toLowerCase()] = value;
  }
  if (Object.keys(others).length > 0) env.QAAS_HEADERS = JSON.stringify(others);
  return env;
}

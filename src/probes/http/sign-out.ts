// A probe that reaches a sign-out route ends the session every other probe of the run is using: the next
// requests of that user silently become anonymous and every authorization verdict after it is wrong. So
// the client refuses anything that looks like signing out, whatever the method (a GET /logout link signs
// out as surely as a POST), unless the profile names the route as harmless (auth.allow_sign_out).

/** A path segment that signs out in most frameworks: logout, log-out, sign_out, logoff, end-session, logout.php. */
const SIGN_OUT_SEGMENT =
  /^(?:log[-_]?out|sign[-_]?out|log[-_]?off|end[-_]?session)(?:[-_]?(?:all|everywhere|user|session))?(?:\.[a-z]{2,5})?$/i;
/** Deleting one of these deletes a session: DELETE /session, DELETE /api/sessions/17, DELETE /auth/login. */
const SESSION_SEGMENT = /^(?:sessions?|login|log[-_]?in|sign[-_]?in|current[-_]?session)$/i;
/** DELETE on a path that ends here revokes the run's token: DELETE /auth, DELETE /api/auth/token. */
const TOKEN_END = /^(?:auth|token|tokens|jwt|access[-_]?token)$/i;

/** Why `method url` would end the run's sessions, or undefined when it would not. */
export function signOutReason(method: string, url: string): string | undefined {
  const segments = pathOf(url)
    .split("/")
    .filter((segment) => segment.length > 0)
    .map(safeDecode);
  const upper = method.toUpperCase();
  const signOut = segments.find((segment) => SIGN_OUT_SEGMENT.test(segment));
  if (signOut) return `"${signOut}" signs out`;
  if (upper !== "DELETE") return undefined;
  const session = segments.find((segment) => SESSION_SEGMENT.test(segment));
  if (session) return `DELETE on "${session}" ends a session`;
  const last = segments.at(-1);
  if (last && TOKEN_END.test(last)) return `DELETE on "${last}" revokes the session's token`;
  return undefined;
}

/** The message a refused sign-out carries: what was refused, why, and what to change in the profile. */
export function signOutRefusal(method: string, url: string, reason: string): string {
  const path = pathOf(url);
  return `${method.toUpperCase()} ${path} refused: it looks like signing out (${reason}) and would end the run's sessions; if it does not, list "${method.toUpperCase()} ${path}" in the profile's auth.allow_sign_out`;
}

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url.split(/[?#]/)[0] ?? url;
  }
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

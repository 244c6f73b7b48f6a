import { z } from "zod";
import { AUTH_CHECKS, checkAuthentication } from "../../probes/auth/check-authentication.ts";
import { surfaceBudget } from "../../probes/http/run-http.ts";
import { probeActions, runProbeTool } from "../../probes/session/probe-run.ts";
import { defineTool } from "../tool.ts";
import { ProbeFilter } from "./contract-server.ts";

export const checkAuthenticationTool = defineTool({
  name: "check_authentication",
  server: "security",
  description:
    "Broken authentication. token-forgery: when the run's sessions are JWTs (header, cookie or query), every authenticated read is replayed with a token claiming another profile user's identity — alg none/None/NONE with no signature, claims changed under the original signature, signed with a guessable HMAC key (cracked offline from the run's own token against a short list of common keys and the app's name, else tried online, bounded) — and with the server's own token past its exp (a short lifetime asked for at sign-in, or a short-lived session token; judged beyond a 65 s clock-skew leeway, waited for at most ~2 min); each counts only when it gets that identity's own answer twice while the same claims under a random signature are refused. cookie-forgery: when a session cookie is signed in a format qaas reads — itsdangerous (Flask's session), cookie-signature (express-session's id, cookie-parser) or Keygrip (cookie-session, Koa) — its signature is checked offline against secrets written in the application's source (string literals under secret-like names and environment-read fallbacks) and common defaults; a match counts only when a cookie signed afresh with it (the same session data in bytes the server never issued; for an opaque session id, the same id) is let in as the user on a page anonymous callers cannot read, while a random-secret control is refused. user-enumeration: sign-in (wrong password) and password-reset answers for profile accounts (at most twice each) versus unknown accounts, compared by status, redirect, headers and body with echoes and volatile parts removed; only stable differences (or a large, consistent timing gap) count. brute-force: 12 wrong passwords for one throw-away or non-existent account (never a profile user), after a profile user's right password showed the operation checks passwords; no 429/423/503, rate-limit header, changed answer or growing delay, and the right password still let in afterwards, is a finding. reset-token-exposure: a reset request answered twice with a fresh token-shaped value (JSON field, link parameter, hidden field); used only on a throw-away account. csrf: when the session travels in a cookie without SameSite=Lax/Strict, each non-destructive POST with free-text fields is sent as another site's form would send it (no CSRF token, then a wrong one, then text/plain JSON; foreign Origin and Sec-Fetch-Site) with an inert marker; a finding only when it is answered as a success, the user's read of the collection above it shows the marker, and the same request without the session changes nothing; a record it renamed is put back. Credential operations whose body type the map inferred are first tried in the encoding the application visibly reads (JSON or form). Answers { candidates (broken-authentication, csrf), stats }.",
  input: z.strictObject({
    operation: ProbeFilter.operation,
    max_requests: ProbeFilter.max_requests,
    checks: z.array(z.enum(AUTH_CHECKS)).optional(),
  }),
  actions: (_input, context) => probeActions(context),
  run: (input, context) =>
    runProbeTool(
      context,
      "check_authentication",
      { max_requests: input.max_requests ?? surfaceBudget(context, 1500) },
      (run) => checkAuthentication(run, input),
    ),
});

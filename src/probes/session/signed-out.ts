import type { HttpExchange } from "../http/http-types.ts";
import type { SignInMemory } from "./credential.ts";
import { hasPasswordField, isHtml, parseHtmlPage, pathOfAction } from "./html-forms.ts";
import { redirectTarget } from "./redirects.ts";

// A session rarely ends with a clean 401. Server-rendered applications redirect to their sign-in page, or
// render the sign-in form in place of the page asked for. Each of these means "sign in again and retry".

/** The last path segment of a sign-in page in most frameworks: /login, /users/sign_in, /signin.php, /logon. */
export const SIGN_IN_SEGMENT = /^(?:log[-_]?in|sign[-_]?in|log[-_]?on)(?:\.[a-z]{2,5})?$/i;

/** Whether `path` is the sign-in page (known from the sign-in itself, or by its name). */
export function isSignInPath(path: string, memory: SignInMemory): boolean {
  const normalized = normalize(path);
  if ([...memory.signInPaths].some((known) => normalize(known) === normalized)) return true;
  const last = normalized.split("/").filter(Boolean).at(-1) ?? "";
  return SIGN_IN_SEGMENT.test(last);
}

/**
 * Why the answer shows that the session has ended (a 401, a redirect to the sign-in page, the sign-in form
 * itself), or undefined. Requests to the sign-in pages are never judged: there the form is expected.
 */
export function signedOutReason(exchange: HttpExchange, memory: SignInMemory): string | undefined {
  const response = exchange.response;
  if (!response) return undefined;
  const requestPath = pathOfAction(exchange.request.url) ?? exchange.request.url;
  if (isSignInPath(requestPath, memory)) return undefined;
  if (response.status === 401) return "answered 401";
  const target = redirectTarget(exchange);
  if (target) {
    const targetPath = pathOfAction(target) ?? target;
    return isSignInPath(targetPath, memory) ? `redirected to the sign-in page ${targetPath}` : undefined;
  }
  if (response.status === 200 && showsSignInForm(exchange, memory)) return "answered with the sign-in form";
  return undefined;
}

/** Whether an HTML answer is (or embeds) the sign-in form: a password form posting to a sign-in path. */
export function showsSignInForm(exchange: HttpExchange, memory: SignInMemory): boolean {
  const response = exchange.response;
  if (!response || !isHtml(response.contentType, response.body)) return false;
  if (!/type\s*=\s*["']?password/i.test(response.body)) return false;
  return parseHtmlPage(response.body, exchange.request.url).forms.some((form) => {
    if (!hasPasswordField(form)) return false;
    const action = pathOfAction(form.action);
    return action !== undefined && isSignInPath(action, memory);
  });
}

function normalize(path: string): string {
  return (path.split("?")[0] ?? path).replace(/\/+$/, "").toLowerCase() || "/";
}

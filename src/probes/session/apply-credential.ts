import type { HttpRequestSpec } from "../http/http-types.ts";
import { parseCookieHeader } from "./cookie-jar.ts";
import type { Credential, LoginRecipe } from "./credential.ts";
import { CSRF_HEADER, csrfHeader, isUnsafeMethod } from "./csrf.ts";

// How a signed-in browser or client sends a request: the session's cookies for that URL, the token where
// the recipe puts it, and — on unsafe methods — the CSRF token the application's scripts would add.

export function applyCredential(
  recipe: LoginRecipe,
  credential: Credential,
  spec: HttpRequestSpec,
  options: { csrf?: boolean } = {},
): HttpRequestSpec {
  const headers: Record<string, string> = {};
  let ownCookies: Record<string, string> = {};
  for (const [name, value] of Object.entries(spec.headers ?? {})) {
    if (name.toLowerCase() === "cookie") ownCookies = parseCookieHeader(value);
    else headers[name] = value;
  }
  const cookies = credential.jar.values(spec.url);
  const token =
    (credential.tokenCookie ? credential.jar.get(credential.tokenCookie, spec.url) : undefined) ??
    credential.token;
  const [kind, name = ""] = splitOnce(recipe.apply_as, ":");
  let url = spec.url;
  if (token !== undefined) {
    if (kind === "cookie") cookies[name] = token;
    else if (kind === "query") {
      const separator = url.includes("?") ? "&" : "?";
      url = `${url}${separator}${encodeURIComponent(name)}=${encodeURIComponent(token)}`;
    } else {
      const header = (name || "Authorization").toLowerCase();
      // A scheme only makes sense in Authorization; custom headers (X-Api-Key) carry the bare token.
      headers[header] = header === "authorization" ? `${recipe.scheme} ${token}` : token;
    }
  }
  const merged = { ...cookies, ...ownCookies };
  if (Object.keys(merged).length > 0) {
    headers.cookie = Object.entries(merged)
      .map(([cookie, value]) => `${cookie}=${value}`)
      .join("; ");
  }
  const wantsCsrf = options.csrf !== false && isUnsafeMethod(spec.method);
  if (wantsCsrf && !Object.keys(headers).some((header) => CSRF_HEADER.test(header))) {
    const csrf = csrfHeader(credential.jar, spec.url, credential.metaCsrf);
    if (csrf) headers[csrf.name.toLowerCase()] = csrf.value;
  }
  return { ...spec, url, headers };
}

function splitOnce(value: string, separator: string): [string, string | undefined] {
  const index = value.indexOf(separator);
  return index < 0 ? [value, undefined] : [value.slice(0, index), value.slice(index + 1)];
}

import type { HttpExchange } from "../http/http-types.ts";
import type { CookieJar } from "./cookie-jar.ts";
import { stringAt } from "./token-search.ts";

// `token_from`: where the profile says the token comes back — `body:<json.path>`, `header:<name>` or
// `cookie:<name>` — looked up across every exchange of the sign-in (a token may arrive on a redirect).

export function tokenFromChain(
  tokenFrom: string,
  chain: readonly HttpExchange[],
  jar: CookieJar,
): string | undefined {
  const match = tokenFrom.match(/^(body|header|cookie):(.+)$/);
  if (!match) return undefined;
  const [, source, name] = match as unknown as [string, string, string];
  if (source === "cookie") return jar.get(name) || undefined;
  for (const exchange of chain) {
    const response = exchange.response;
    if (!response) continue;
    const found =
      source === "body" ? stringAt(response.json, name) : stripScheme(response.headers[name.toLowerCase()]);
    if (found) return found;
  }
  return undefined;
}

export function stripScheme(value: string | undefined): string | undefined {
  if (!value) return undefined;
  return value.replace(/^(Bearer|Token|JWT)\s+/i, "").trim() || undefined;
}

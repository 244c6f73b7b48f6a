import type { HttpExchange } from "./http-types.ts";
import type { Masker } from "./masking.ts";

const CREDENTIAL_HEADER = /^(authorization|cookie|x-api-key|api-key|x-auth-token|proxy-authorization)$/i;

function singleQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** `QAAS_TOKEN_ALICE`: the variable a reproduction reads a user's credential from. */
export function credentialVariable(user: string): string {
  return `QAAS_TOKEN_${user.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
}

/**
 * A curl line that replays the request. Credentials never appear: a signed-in user's header is written as
 * a shell variable (`$QAAS_TOKEN_ALICE`) to fill in, and any other secret is masked.
 */
export function curlLine(exchange: HttpExchange, masker: Masker): string {
  const { method, url, headers, body } = exchange.request;
  const parts = ["curl", "-sS", "-i"];
  if (method !== "GET" || body !== undefined) parts.push("-X", method);
  parts.push(singleQuote(masker.maskUrl(url)));
  for (const [name, value] of Object.entries(headers)) {
    if (CREDENTIAL_HEADER.test(name)) {
      const variable = credentialVariable(exchange.user ?? "user");
      const scheme = value.match(/^(Bearer|Basic|Token)\s+/i)?.[0] ?? "";
      const cookieName = name.toLowerCase() === "cookie" ? (value.split("=")[0] ?? "session") : undefined;
      const shown = cookieName ? `${cookieName}=\${${variable}}` : `${scheme}\${${variable}}`;
      parts.push("-H", `"${name}: ${shown}"`);
    } else {
      parts.push("-H", singleQuote(`${name}: ${masker.maskText(value)}`));
    }
  }
  if (body !== undefined) parts.push("--data-raw", singleQuote(masker.maskBody(body, true)));
  return parts.join(" ");
}

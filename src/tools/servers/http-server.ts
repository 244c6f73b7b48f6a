import { z } from "zod";
import { maskedExchange, recordExchange } from "../../probes/http/exchange-record.ts";
import { BudgetExhaustedError, WriteNotAllowedError } from "../../probes/http/http-client.ts";
import { openHttpClient, probeTargetOf } from "../../probes/http/run-http.ts";
import { buildQuery, joinUrl } from "../../probes/http/target-url.ts";
import { unusedCredential } from "../../probes/session/credential-check.ts";
import { sessionPoolFor } from "../../probes/session/session-pool.ts";
import type { ToolContext } from "../context.ts";
import { err, ok } from "../result.ts";
import type { ToolDefinition } from "../tool.ts";
import { defineTool } from "../tool.ts";

const HttpRequestInput = z.strictObject({
  method: z
    .string()
    .regex(/^[A-Za-z]+$/)
    .default("GET"),
  /** A path on the target (`/api/items/3?x=1`) or an absolute URL on the target's origin. */
  path: z.string().min(1),
  /** A profile user to send as; anonymous when absent. */
  user: z.string().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  query: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  /** A JSON value (sent as application/json) or a string (sent as given). */
  body: z.unknown().optional(),
  max_body_chars: z.number().int().positive().max(50_000).default(4000),
});
type HttpRequestInput = z.infer<typeof HttpRequestInput>;

function urlOf(input: HttpRequestInput, baseUrl: string): string | undefined {
  const base = new URL(baseUrl);
  if (/^https?:\/\//i.test(input.path)) {
    const url = new URL(input.path);
    if (url.origin !== base.origin) return undefined;
    return `${url.toString()}${input.query ? buildQuery(input.query).replace(/^\?/, url.search ? "&" : "?") : ""}`;
  }
  const [path, search] = input.path.split("?", 2) as [string, string | undefined];
  const query = input.query ? buildQuery(input.query) : "";
  const joined = `${joinUrl(baseUrl, path)}${search ? `?${search}` : ""}`;
  return query ? `${joined}${search ? `&${query.slice(1)}` : query}` : joined;
}

function requestUrl(input: HttpRequestInput, context: ToolContext): string {
  const target = probeTargetOf(context);
  if (typeof target === "string") return input.path;
  return urlOf(input, target.baseUrl) ?? input.path;
}

export const httpRequestTool = defineTool({
  name: "http_request",
  server: "http",
  description:
    "Send one HTTP request to the live target, as a profile user (signed in by the shared session layer) or anonymously. Answers status, masked headers, a masked body excerpt and the artifact holding the full masked exchange. Counts against the agent's request budget; writes are refused on external targets unless the profile allows them.",
  input: HttpRequestInput,
  actions: (input, context) => [
    { kind: "http_request", method: input.method.toUpperCase(), url: requestUrl(input, context) },
  ],
  async run(input, context) {
    const target = probeTargetOf(context);
    if (typeof target === "string") return err(`http_request: ${target}`);
    const url = urlOf(input, target.baseUrl);
    if (!url)
      return err(
        `http_request: ${input.path} is not on the target (${new URL(target.baseUrl).origin}); only the target may be requested`,
      );
    const client = openHttpClient(context, target, { maxRequests: 3 });
    const sessions = sessionPoolFor(context, target.baseUrl);
    const headers: Record<string, string> = {
      accept: "application/json, text/html;q=0.9, */*;q=0.8",
      ...(input.headers ?? {}),
    };
    let body: string | undefined;
    if (input.body !== undefined) {
      body = typeof input.body === "string" ? input.body : JSON.stringify(input.body);
      if (!Object.keys(headers).some((name) => name.toLowerCase() === "content-type")) {
        headers["content-type"] = typeof input.body === "string" ? "text/plain" : "application/json";
      }
    }
    try {
      const exchange = await sessions.send(client, input.user, {
        method: input.method.toUpperCase(),
        url,
        headers,
        body,
      });
      const masked = maskedExchange(exchange, sessions.masker, input.max_body_chars);
      const artifact = recordExchange(
        context,
        `http_request/${String(exchange.sequence).padStart(5, "0")}-${input.method.toLowerCase()}`,
        exchange,
        sessions.masker,
      );
      if (!masked.response)
        return err(
          `http_request: ${input.method} ${url} got no answer (${exchange.error ?? "unknown error"})`,
          { artifact },
        );
      return ok({
        status: masked.response.status,
        headers: masked.response.headers,
        set_cookie: masked.response.set_cookie,
        body_excerpt: masked.response.body,
        body_truncated: masked.response.body_truncated,
        duration_ms: exchange.durationMs,
        user: input.user ?? "anonymous",
        artifact,
      });
    } catch (error) {
      if (error instanceof WriteNotAllowedError || error instanceof BudgetExhaustedError)
        return err(`http_request: ${error.message}`);
      return err(`http_request: ${error instanceof Error ? error.message : String(error)}`);
    }
  },
});

const SignInInput = z.strictObject({
  /** One profile user; every user when absent. */
  user: z.string().optional(),
  /** Sign in again even when the session is still alive. */
  force: z.boolean().default(false),
});

export const signInTool = defineTool({
  name: "sign_in",
  server: "http",
  description:
    "Sign in as one or every user of the target profile with its declared login recipe (JSON or form login, token from body/header/cookie, or a static bearer/API key from secret_ref). Sessions are kept for the whole run and reused by every probe; errors name the user and the failing step.",
  input: SignInInput,
  // Sign-in changes no data: it is declared as a read of the target.
  actions: (_input, context) => {
    const target = probeTargetOf(context);
    return typeof target === "string" ? [] : [{ kind: "http_request", method: "GET", url: target.baseUrl }];
  },
  async run(input, context) {
    const target = probeTargetOf(context);
    if (typeof target === "string") return err(`sign_in: ${target}`);
    const sessions = sessionPoolFor(context, target.baseUrl);
    const users = input.user ? [input.user] : sessions.users().map((user) => user.name);
    if (users.length === 0)
      return ok({ sessions: [], errors: {}, note: "the profile declares no users: probes run anonymously" });
    // A form sign-in loads its page, posts, and follows the redirects: a few requests per user, and two
    // more to see that the application reads the credential.
    const client = openHttpClient(context, target, { maxRequests: users.length * 8 });
    const errors: Record<string, string> = {};
    await Promise.all(
      users.map(async (name) => {
        try {
          await sessions.signIn(name, client, input.force);
        } catch (error) {
          errors[name] = error instanceof Error ? error.message : String(error);
        }
      }),
    );
    const summaries = sessions.summaries().filter((summary) => users.includes(summary.user));
    if (Object.keys(errors).length === users.length)
      return err(`sign_in: no user could sign in: ${Object.values(errors).join("; ")}`, { errors });
    const warnings: Record<string, string> = {};
    const applyAs = target.profile?.auth?.login?.apply_as;
    for (const name of users.filter((user) => errors[user] === undefined)) {
      const unused = await unusedCredential(
        client,
        sessions,
        context.systemMap(),
        target.baseUrl,
        name,
        applyAs,
      );
      if (unused) warnings[name] = unused;
    }
    return ok({ sessions: summaries, errors, warnings, requests: client.stats.sent });
  },
});

export const httpTools: ToolDefinition[] = [httpRequestTool, signInTool];

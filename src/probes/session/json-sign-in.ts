import type { HttpExchange, HttpRequestSpec } from "../http/http-types.ts";
import { joinUrl } from "../http/target-url.ts";
import { CookieJar } from "./cookie-jar.ts";
import type { Credential, LoginRecipe, ProfileUser, SignInEnvironment } from "./credential.ts";
import {
  credentialValues,
  expiryOf,
  fillTemplate,
  makeCredential,
  maskCookies,
  parseEndpoint,
  SignInError,
  stepError,
  templateNeedsPassword,
} from "./credential.ts";
import type { MetaCsrf } from "./csrf.ts";
import { csrfHeader, metaCsrf } from "./csrf.ts";
import { isHtml, parseHtmlPage, pathOfAction } from "./html-forms.ts";
import { followRedirects, redirectTarget, signInSender } from "./redirects.ts";
import { isSignInPath } from "./signed-out.ts";
import { tokenInAnswers } from "./token-search.ts";
import { stripScheme, tokenFromChain } from "./token-source.ts";

// A JSON sign-in: post the credentials, take the token wherever the answer keeps it (the named place, any
// token-like key at any depth, a JWT-shaped string, a header) or keep the session cookie when the API is
// cookie-authenticated. Such APIs often want their CSRF cookie echoed in a header, even on the sign-in.

const TOKEN_HEADERS = ["authorization", "x-auth-token", "x-access-token", "x-session-token", "token"];

export async function jsonSignIn(
  user: ProfileUser,
  recipe: LoginRecipe,
  environment: SignInEnvironment,
): Promise<Credential> {
  const { baseUrl, client } = environment;
  const endpoint = parseEndpoint(user.name, recipe.endpoint, "auth.login.endpoint");
  const url = joinUrl(baseUrl, endpoint.path);
  const where = `${endpoint.method} ${endpoint.path}`;
  const jar = new CookieJar(environment.now);
  const send = signInSender(environment, jar, user.name);
  environment.memory.signInPaths.add(endpoint.path);

  const pages: HttpExchange[] = [];
  let meta: MetaCsrf | undefined;
  const loadPage = async (path: string) => {
    const page = await followRedirects(send, {
      method: "GET",
      url: joinUrl(baseUrl, path),
      headers: { accept: "text/html,application/json;q=0.9,*/*;q=0.8" },
    });
    pages.push(...page.chain);
    const response = page.final.response;
    if (response && isHtml(response.contentType, response.body)) {
      meta = metaCsrf(parseHtmlPage(response.body, page.final.request.url).meta) ?? meta;
    }
  };

  const values = credentialValues(user, environment, templateNeedsPassword(recipe.body));
  const body = JSON.stringify(
    fillTemplate(recipe.body ?? { username: "{username}", password: "{password}" }, values),
  );
  const post = () => {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json, text/html;q=0.9, */*;q=0.8",
    };
    const csrf = csrfHeader(jar, url, meta);
    if (csrf) headers[csrf.name.toLowerCase()] = csrf.value;
    return followRedirects(send, { method: endpoint.method, url, headers, body });
  };

  let result: Awaited<ReturnType<typeof followRedirects>>;
  try {
    if (recipe.page) await loadPage(recipe.page);
    result = await post();
    // A cookie-authenticated API refuses a sign-in without its CSRF token: load a page that sets it, once.
    if (!recipe.page && refusedForCsrf(result.chain[0]!, jar)) {
      pages.push(...result.chain);
      await loadPage("/");
      result = await post();
    }
  } catch (error) {
    throw stepError(user.name, "request", error);
  }
  const posted = result.chain[0]!;
  const answer = posted.response;
  if (!answer) {
    throw new SignInError(user.name, "request", `${where} did not answer (${posted.error ?? "no response"})`);
  }
  if (answer.status >= 400) {
    throw new SignInError(
      user.name,
      "request",
      `${where} answered ${answer.status}${refusedForCsrf(posted, jar) ? " (a CSRF refusal: set auth.login.page to a page that sets the CSRF cookie)" : ""}; check users[${user.name}].username and its password variable, and auth.login.body`,
    );
  }
  for (const exchange of result.chain) {
    const target = redirectTarget(exchange);
    const path = target ? pathOfAction(target) : undefined;
    if (path && path !== endpoint.path && isSignInPath(path, environment.memory)) {
      throw new SignInError(user.name, "verify", `${where} redirected back to the sign-in page ${path}`);
    }
  }

  const found = locateToken(recipe, result.chain, jar);
  if (recipe.token_from && !found) {
    throw new SignInError(
      user.name,
      "token",
      `no token at ${recipe.token_from} in the ${answer.status} answer of ${where}`,
    );
  }
  if (!found) {
    const failure = failureMessage(answer.json);
    if (failure !== undefined) {
      throw new SignInError(
        user.name,
        "verify",
        `${where} answered ${answer.status} but says the sign-in failed${failure ? ` ("${failure}")` : ""}; check users[${user.name}].username and its password variable`,
      );
    }
    if (jar.size === 0) {
      throw new SignInError(
        user.name,
        "token",
        `could not find a token in the answer of ${where} (searched the body for token-like keys and JWTs at any depth, the ${TOKEN_HEADERS.join("/")} headers and cookies; none was set); set auth.login.token_from`,
      );
    }
  }
  maskCookies(environment.masker, jar);
  environment.masker.addSecret(found?.token);
  const now = environment.now();
  return makeCredential({
    token: found?.token,
    tokenCookie: found?.cookie,
    jar,
    metaCsrf: meta,
    obtainedAt: now,
    expiresAt: expiryOf(found?.token, recipe.ttl_seconds, now),
    exchange: posted,
    chain: [...pages, ...result.chain],
  });
}

/** The token where the profile says, else wherever a token usually is; undefined for a cookie-only session. */
function locateToken(
  recipe: LoginRecipe,
  chain: readonly HttpExchange[],
  jar: CookieJar,
): { token: string; cookie?: string } | undefined {
  if (recipe.token_from) {
    const token = tokenFromChain(recipe.token_from, chain, jar);
    if (!token) return undefined;
    return {
      token,
      cookie: recipe.token_from.startsWith("cookie:") ? recipe.token_from.slice(7) : undefined,
    };
  }
  const answered = tokenInAnswers(chain);
  if (answered) return { token: answered };
  for (const exchange of chain) {
    for (const header of TOKEN_HEADERS) {
      const token = stripScheme(exchange.response?.headers[header]);
      if (token) return { token };
    }
  }
  const applyCookie = recipe.apply_as.match(/^cookie:(.+)$/)?.[1];
  const cookie = applyCookie ? jar.get(applyCookie) : undefined;
  return cookie && applyCookie ? { token: cookie, cookie: applyCookie } : undefined;
}

/** A 403/419 that names CSRF, or that came with a CSRF cookie the request did not echo. */
function refusedForCsrf(exchange: HttpExchange, jar: CookieJar): boolean {
  const response = exchange.response;
  if (!response || (response.status !== 403 && response.status !== 419)) return false;
  const echoed = Object.keys(exchange.request.headers).some((name) => /csrf|xsrf/i.test(name));
  if (echoed) return false;
  return (
    /csrf|xsrf/i.test(response.body) || Object.keys(jar.values()).some((name) => /csrf|xsrf/i.test(name))
  );
}

/** A 2xx JSON body that says the sign-in failed: the message ("" when none), else undefined. */
function failureMessage(json: unknown): string | undefined {
  if (json === null || typeof json !== "object" || Array.isArray(json)) return undefined;
  const body = json as Record<string, unknown>;
  const failed =
    body.success === false ||
    body.ok === false ||
    body.authenticated === false ||
    (typeof body.status === "string" && /^(error|fail|failed|failure|unauthori[sz]ed)$/i.test(body.status)) ||
    body.error !== undefined ||
    body.errors !== undefined;
  if (!failed) return undefined;
  const message = [body.message, body.error, body.detail].find((value) => typeof value === "string");
  return typeof message === "string" ? message.slice(0, 200) : "";
}

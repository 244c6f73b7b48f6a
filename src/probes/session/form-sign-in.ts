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
} from "./credential.ts";
import { maskCsrfTokens, metaCsrf } from "./csrf.ts";
import { formPostingTo, formRequest, loadForm, overlayFields } from "./form-submission.ts";
import type { HtmlForm } from "./html-forms.ts";
import {
  formDefaults,
  hasPasswordField,
  isHtml,
  parseHtmlPage,
  pathOfAction,
  submitButton,
} from "./html-forms.ts";
import { followRedirects, redirectTarget, signInSender } from "./redirects.ts";
import { isSignInPath } from "./signed-out.ts";
import { tokenInAnswers } from "./token-search.ts";
import { tokenFromChain } from "./token-source.ts";

// A form sign-in as a browser does it: load the page with the form (which starts a session and plants the
// CSRF token), post the form's own fields with the user's credentials, follow the redirects keeping every
// cookie, and judge where it landed. The session cookies are the credential.

const USERNAME_FIELD = /user|login|email|mail|account|name|identifier|ident/i;

export async function formSignIn(
  user: ProfileUser,
  recipe: LoginRecipe,
  environment: SignInEnvironment,
): Promise<Credential> {
  const { baseUrl, client, memory } = environment;
  if (!recipe.endpoint && !recipe.page) {
    throw new SignInError(
      user.name,
      "recipe",
      'a form login needs auth.login.endpoint ("METHOD /path", where the form posts) or auth.login.page (where the form is)',
    );
  }
  const endpoint = recipe.endpoint
    ? parseEndpoint(user.name, recipe.endpoint, "auth.login.endpoint")
    : undefined;
  const jar = new CookieJar(environment.now);
  const send = signInSender(environment, jar, user.name);

  // A declared page is the only place to look; without one, the endpoint's own path, then /login.
  const candidates =
    memory.formPage === null && endpoint
      ? []
      : [memory.formPage, ...(recipe.page ? [recipe.page] : [endpoint?.path, "/login"])].filter(
          (candidate): candidate is string => typeof candidate === "string",
        );
  const pick = (forms: HtmlForm[]) =>
    (endpoint ? formPostingTo(forms, endpoint.path, endpoint.method) : undefined) ??
    forms.find((form) => hasPasswordField(form) && form.method !== "GET");
  let found: Awaited<ReturnType<typeof loadForm>>;
  try {
    found = await loadForm(send, baseUrl, candidates, pick);
  } catch (error) {
    throw stepError(user.name, "page", error);
  }
  const loaded = found.loaded;
  const form = loaded?.form;
  if (!form && !endpoint) {
    throw new SignInError(
      user.name,
      "page",
      `no sign-in form (a form with a password field) on ${found.tried.join(", ")}; set auth.login.page to the page that shows it, or auth.login.endpoint`,
    );
  }
  if (form && loaded) memory.formPage = loaded.url;
  else if (endpoint) memory.formPage = null;
  maskCsrfTokens(environment.masker, form, loaded?.parsed.meta);

  const values = credentialValues(user, environment, true);
  const fields = form
    ? overlayFields(withSubmit(form), credentialsFor(form, recipe, values, user.name))
    : Object.entries(fillTemplate(recipe.body ?? { username: "{username}", password: "{password}" }, values));
  const url = endpoint ? joinUrl(baseUrl, endpoint.path) : form!.action;
  const method = endpoint?.method ?? form!.method;
  const where = `${method} ${pathOfAction(url) ?? url}`;
  for (const path of [
    endpoint?.path,
    pathOfAction(url),
    loaded && form ? pathOfAction(loaded.url) : undefined,
  ]) {
    if (path) memory.signInPaths.add(path);
  }

  const spec = formRequest({
    url,
    method,
    enctype: form?.enctype ?? "application/x-www-form-urlencoded",
    fields,
    referer: loaded?.url,
  });
  let result: Awaited<ReturnType<typeof followRedirects>>;
  try {
    result = await followRedirects(send, spec);
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
      `${where} answered ${answer.status}; check users[${user.name}].username and its password variable${form ? "" : ", and auth.login.body (no sign-in form was found to take the field names from)"}`,
    );
  }
  judgeLanding(user.name, where, result.chain, environment);

  // A post that set no cookie (an OAuth2 password grant, FastAPI's OAuth2PasswordRequestForm) answers its token.
  const token = recipe.token_from
    ? tokenFromChain(recipe.token_from, result.chain, jar)
    : jar.size === 0
      ? tokenInAnswers(result.chain)
      : undefined;
  if (recipe.token_from && token === undefined) {
    throw new SignInError(user.name, "token", `no token at ${recipe.token_from} after ${where}`);
  }
  if (token === undefined && jar.size === 0) {
    throw new SignInError(
      user.name,
      "token",
      `${where} answered ${answer.status} but set no cookie, so there is no session to keep; if the session travels another way, set auth.login.token_from`,
    );
  }
  maskCookies(environment.masker, jar);
  environment.masker.addSecret(token);
  const landing = result.final.response;
  const landingPage =
    landing && isHtml(landing.contentType, landing.body)
      ? parseHtmlPage(landing.body, result.final.request.url)
      : undefined;
  const now = environment.now();
  return makeCredential({
    token,
    tokenCookie: recipe.token_from?.startsWith("cookie:") ? recipe.token_from.slice(7) : undefined,
    jar,
    metaCsrf: metaCsrf(landingPage?.meta ?? {}) ?? metaCsrf(loaded?.parsed.meta ?? {}),
    obtainedAt: now,
    expiresAt: expiryOf(token, recipe.ttl_seconds, now),
    exchange: posted,
    chain: [...found.exchanges, ...result.chain],
  });
}

/** The form's fields plus the submit button a person would click. */
function withSubmit(form: HtmlForm): Array<[string, string]> {
  const fields = formDefaults(form);
  const button = submitButton(form);
  if (button) fields.push([button.name, button.value]);
  return fields;
}

/** The declared body template, else the form's own username and password fields. */
function credentialsFor(
  form: HtmlForm,
  recipe: LoginRecipe,
  values: { username: string; password: string; email: string },
  user: string,
): Record<string, string> {
  if (recipe.body) return fillTemplate(recipe.body, values);
  const password = form.controls.find((control) => control.type === "password");
  const typed = form.controls.filter((control) => ["text", "email", "tel", ""].includes(control.type));
  const username =
    typed.find((control) => control.type === "email" || USERNAME_FIELD.test(control.name)) ?? typed[0];
  if (!password || !username) {
    throw new SignInError(
      user,
      "page",
      `the sign-in form posting to ${pathOfAction(form.action)} has ${password ? "no username field" : "no password field"}; set auth.login.body with the field names`,
    );
  }
  return {
    [username.name]: username.type === "email" ? values.email : values.username,
    [password.name]: values.password,
  };
}

/**
 * A sign-in that landed back on the sign-in page (by redirect, or by showing the form again) or on a 401/403
 * failed, whatever the status said; the page's own message is quoted.
 */
function judgeLanding(
  user: string,
  where: string,
  chain: ReadonlyArray<Parameters<typeof redirectTarget>[0]>,
  environment: SignInEnvironment,
): void {
  for (const exchange of chain) {
    const target = redirectTarget(exchange);
    const path = target ? pathOfAction(target) : undefined;
    if (path && isSignInPath(path, environment.memory)) {
      const message = messageInQuery(target!) ?? pageMessage(chain.at(-1));
      throw new SignInError(
        user,
        "verify",
        `${where} sent the browser back to the sign-in page ${path}${message ? ` ("${message}")` : ""}; check users[${user}].username and its password variable`,
      );
    }
  }
  const last = chain.at(-1)!;
  const status = last.response?.status ?? 0;
  if (status === 401 || status === 403) {
    throw new SignInError(user, "verify", `${where} led to ${last.request.url} which answered ${status}`);
  }
  const body = last.response?.body ?? "";
  if (status === 200 && last.response && isHtml(last.response.contentType, body)) {
    const page = parseHtmlPage(body, last.request.url);
    const form = page.forms.find((candidate) => {
      const action = pathOfAction(candidate.action);
      return hasPasswordField(candidate) && action !== undefined && isSignInPath(action, environment.memory);
    });
    if (form) {
      const message = page.messages[0];
      throw new SignInError(
        user,
        "verify",
        `${where} answered with the sign-in form again${message ? ` ("${message}")` : ""}; check users[${user}].username and its password variable`,
      );
    }
  }
}

function messageInQuery(url: string): string | undefined {
  const params = new URL(url).searchParams;
  for (const name of ["error", "message", "msg", "err", "error_description", "reason", "alert"]) {
    const value = params.get(name);
    if (value) return value.slice(0, 200);
  }
  return undefined;
}

function pageMessage(exchange: Parameters<typeof redirectTarget>[0] | undefined): string | undefined {
  const response = exchange?.response;
  if (!response || !isHtml(response.contentType, response.body)) return undefined;
  return parseHtmlPage(response.body, exchange.request.url).messages[0]?.slice(0, 200);
}

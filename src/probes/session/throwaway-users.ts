import { randomBytes } from "node:crypto";
import type { HttpClient } from "../http/http-client.ts";
import type { HttpExchange, HttpRequestSpec } from "../http/http-types.ts";
import { joinUrl } from "../http/target-url.ts";
import { CookieJar } from "./cookie-jar.ts";
import type { SignupRecipe } from "./credential.ts";
import { fillTemplate, parseEndpoint, SignInError, stepError } from "./credential.ts";
import { csrfHeader, metaCsrf } from "./csrf.ts";
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
import type { RedirectChain } from "./redirects.ts";
import { followRedirects, redirectTarget, sendWithJar } from "./redirects.ts";

// Throw-away users: accounts qaas registers itself, when the profile allows sign-up, so a check that needs
// two users of one role runs even when the profile knows one. Names are unique and plainly qaas's; the
// password is strong, random and lives only in memory (and in the masker, so evidence never shows it).

export interface ThrowawayIdentity {
  /** The session's name in the pool. */
  name: string;
  username: string;
  email: string;
  password: string;
}

export function newThrowawayIdentity(): ThrowawayIdentity {
  const id = randomBytes(4).toString("hex");
  // Upper, lower, digit and symbol: passes the usual complexity rules; 22 characters passes length rules.
  const password = `Qa9!${randomBytes(14).toString("base64url")}`;
  return { name: `throwaway-${id}`, username: `qaas${id}`, email: `qaas${id}@example.com`, password };
}

export interface SignupEnvironment {
  baseUrl: string;
  client: HttpClient;
  now: () => number;
}

/**
 * Registers `identity` with the application's sign-up and answers the name it signs in with (its username,
 * or its e-mail address when the sign-up takes no username) and the exchanges. Failures name the step.
 */
export async function registerThrowaway(
  identity: ThrowawayIdentity,
  signup: SignupRecipe,
  environment: SignupEnvironment,
): Promise<{ loginName: string; chain: HttpExchange[] }> {
  const endpoint = parseEndpoint(identity.name, signup.endpoint, "auth.signup.endpoint");
  const where = `${endpoint.method} ${endpoint.path}`;
  const jar = new CookieJar(environment.now);
  const send = (spec: HttpRequestSpec) =>
    sendWithJar(environment.client, jar, spec, { signIn: true, user: identity.name });
  const url = joinUrl(environment.baseUrl, endpoint.path);
  const values = { username: identity.username, email: identity.email, password: identity.password };
  const pages: HttpExchange[] = [];
  let request: HttpRequestSpec;
  let loginName = identity.username;
  let signupPaths = new Set([endpoint.path]);

  if (signup.kind === "form") {
    const { loaded, tried, exchanges } = await loadForm(
      send,
      environment.baseUrl,
      [signup.page ?? "", endpoint.path, "/register", "/signup"],
      (forms) =>
        formPostingTo(forms, endpoint.path, endpoint.method) ??
        forms.find((form) => hasPasswordField(form) && form.method !== "GET"),
    );
    pages.push(...exchanges);
    const form = loaded?.form;
    if (!form && !signup.body) {
      throw new SignInError(
        identity.name,
        "signup",
        `no sign-up form on ${tried.join(", ")}; set auth.signup.page, or auth.signup.body with the field names`,
      );
    }
    const detected = form && !signup.body ? signupFields(form, values) : undefined;
    const typed = detected?.fields ?? fillTemplate(signup.body ?? {}, values);
    if (detected && !detected.hasUsername) loginName = identity.email;
    if (signup.body && !Object.values(signup.body).some((value) => value.includes("{username}")))
      loginName = identity.email;
    const defaults = form ? formDefaults(form) : [];
    const button = form ? submitButton(form) : undefined;
    if (button) defaults.push([button.name, button.value]);
    if (loaded && form) signupPaths = new Set([endpoint.path, pathOfAction(loaded.url) ?? endpoint.path]);
    request = formRequest({
      url,
      method: endpoint.method,
      enctype: form?.enctype ?? "application/x-www-form-urlencoded",
      fields: overlayFields(defaults, typed),
      referer: loaded?.url,
    });
  } else {
    let meta: ReturnType<typeof metaCsrf>;
    if (signup.page) {
      const page = await followRedirects(send, {
        method: "GET",
        url: joinUrl(environment.baseUrl, signup.page),
      });
      pages.push(...page.chain);
      const response = page.final.response;
      if (response && isHtml(response.contentType, response.body))
        meta = metaCsrf(parseHtmlPage(response.body, page.final.request.url).meta);
    }
    const template = signup.body ?? { username: "{username}", email: "{email}", password: "{password}" };
    if (!Object.values(template).some((value) => value.includes("{username}"))) loginName = identity.email;
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json, text/html;q=0.9, */*;q=0.8",
    };
    const csrf = csrfHeader(jar, url, meta);
    if (csrf) headers[csrf.name.toLowerCase()] = csrf.value;
    request = { method: endpoint.method, url, headers, body: JSON.stringify(fillTemplate(template, values)) };
  }

  let result: RedirectChain;
  try {
    result = await followRedirects(send, request);
  } catch (error) {
    throw stepError(identity.name, "signup", error);
  }
  judgeSignup(identity.name, where, result, signupPaths);
  return { loginName, chain: [...pages, ...result.chain] };
}

/** The form's fields a person fills in to register: names, addresses, both password boxes, required boxes. */
function signupFields(
  form: HtmlForm,
  values: { username: string; email: string; password: string },
): { fields: Record<string, string>; hasUsername: boolean } {
  const fields: Record<string, string> = {};
  let hasUsername = false;
  for (const control of form.controls) {
    if (control.type === "password") fields[control.name] = values.password;
    else if (control.type === "email" || /e-?mail/i.test(control.name)) fields[control.name] = values.email;
    else if (["text", "tel", ""].includes(control.type)) {
      if (/user|login|nick|handle|account/i.test(control.name)) {
        fields[control.name] = values.username;
        hasUsername = true;
      } else if (control.value === "" && (control.required || /name/i.test(control.name))) {
        fields[control.name] = values.username;
      }
    } else if (control.type === "checkbox" && control.required) fields[control.name] = control.value;
  }
  return { fields, hasUsername };
}

function judgeSignup(user: string, where: string, result: RedirectChain, signupPaths: Set<string>): void {
  const posted = result.chain[0]!;
  const response = posted.response;
  if (!response)
    throw new SignInError(user, "signup", `${where} did not answer (${posted.error ?? "no response"})`);
  if (response.status >= 400) {
    const detail = typeof response.json === "object" ? JSON.stringify(response.json).slice(0, 200) : "";
    throw new SignInError(
      user,
      "signup",
      `${where} answered ${response.status}${detail ? ` (${detail})` : ""}; check auth.signup.body against the fields the application expects`,
    );
  }
  const json = response.json as Record<string, unknown> | undefined;
  if (json && typeof json === "object" && (json.success === false || json.status === "fail" || json.error)) {
    throw new SignInError(
      user,
      "signup",
      `${where} answered ${response.status} but refused: ${JSON.stringify(json).slice(0, 200)}`,
    );
  }
  for (const exchange of result.chain) {
    const target = redirectTarget(exchange);
    const path = target ? pathOfAction(target) : undefined;
    if (path && signupPaths.has(path)) {
      throw new SignInError(user, "signup", `${where} sent the browser back to the sign-up page ${path}`);
    }
  }
  const last = result.final;
  const body = last.response?.body ?? "";
  if (last.response?.status === 200 && isHtml(last.response.contentType, body)) {
    const page = parseHtmlPage(body, last.request.url);
    const again = page.forms.some((form) => {
      const action = pathOfAction(form.action);
      return hasPasswordField(form) && action !== undefined && signupPaths.has(action);
    });
    if (again) {
      const message = page.messages[0];
      throw new SignInError(
        user,
        "signup",
        `${where} answered with the sign-up form again${message ? ` ("${message}")` : ""}; check auth.signup.body`,
      );
    }
  }
}

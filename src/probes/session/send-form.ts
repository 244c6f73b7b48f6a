import type { Operation } from "../../map/system-map.ts";
import type { FormValue } from "../api/request-builder.ts";
import type { HttpClient } from "../http/http-client.ts";
import { WriteNotAllowedError } from "../http/http-client.ts";
import type { HttpExchange, HttpRequestSpec } from "../http/http-types.ts";
import { isWriteMethod } from "../http/http-types.ts";
import { fillPath, joinUrl } from "../http/target-url.ts";
import { CookieJar } from "./cookie-jar.ts";
import { csrfControl, maskCsrfTokens, metaCsrf } from "./csrf.ts";
import { formPostingTo, formRequest, loadForm, overlayFields } from "./form-submission.ts";
import type { HtmlForm } from "./html-forms.ts";
import { formDefaults, submitButton } from "./html-forms.ts";
import { followRedirects } from "./redirects.ts";
import type { SessionPool } from "./session-pool.ts";

// A form operation sent as a browser sends it: load the page that shows the form as that user (so the CSRF
// token is fresh and belongs to this session), submit the form's own fields with the given values over
// them, encoded as the form says, and follow the redirects. Every exchange goes through the session pool
// and the budgeted client, so cookies, re-sign-in, the write policy and masking all apply.

export type FormFields = Record<string, FormValue | FormValue[] | undefined>;

export interface SendFormOptions {
  /** Values for the `{param}` placeholders of the operation's path and of its form page. */
  pathValues?: Record<string, string>;
  /**
   * fresh (default): the page's CSRF token replaces any given one; given: the caller's value is sent as is;
   * omit: no CSRF token at all (to see whether the application refuses the submission).
   */
  csrf?: "fresh" | "given" | "omit";
  /** Follow the redirects after the submission (default true). */
  followRedirects?: boolean;
  /** Anonymous submissions: the visitor's jar (default: a fresh one for this submission). */
  jar?: CookieJar;
}

export interface FormSubmission {
  /** The last exchange: where the browser landed. */
  exchange: HttpExchange;
  /** The submission and every redirect after it, in order. */
  chain: HttpExchange[];
  /** The exchanges that loaded the form's page (redirects included). */
  page: HttpExchange[];
  /** The form found on the page, if any. */
  form: HtmlForm | undefined;
  /** The CSRF field and whether a token was sent in it. */
  csrf: { field: string; sent: boolean } | undefined;
}

export async function sendForm(
  pool: SessionPool,
  client: HttpClient,
  user: string | undefined,
  operation: Operation,
  fields: FormFields,
  options: SendFormOptions = {},
): Promise<FormSubmission> {
  const method = operation.method.toUpperCase();
  if (isWriteMethod(method) && !client.writesAllowed) {
    // Refused before the page is loaded, so a refused write costs no request.
    client.stats.skipped_writes += 1;
    throw new WriteNotAllowedError(`${method} ${operation.path} skipped: the target does not allow writes`);
  }
  const jar = user === undefined ? (options.jar ?? new CookieJar()) : undefined;
  const csrfMode = options.csrf ?? "fresh";
  const send = (spec: HttpRequestSpec) => pool.send(client, user, spec, { jar, csrf: csrfMode !== "omit" });
  const pathValues = options.pathValues ?? {};
  const actionPath = fillPath(operation.path, pathValues);

  let form: HtmlForm | undefined;
  let page: HttpExchange[] = [];
  let pageUrl: string | undefined;
  let meta: ReturnType<typeof metaCsrf>;
  if (operation.form) {
    const found = await loadForm(
      send,
      pool.baseUrl,
      [fillPath(operation.form.page, pathValues)],
      (forms) => formPostingTo(forms, actionPath, method) ?? formPostingTo(forms, operation.path, method),
    );
    const loaded = found.loaded;
    form = loaded?.form;
    page = found.exchanges;
    pageUrl = loaded?.url;
    meta = metaCsrf(loaded?.parsed.meta ?? {});
    maskCsrfTokens(pool.masker, form, loaded?.parsed.meta);
  }

  const defaults: Array<[string, string]> = form ? formDefaults(form) : [];
  const button = form ? submitButton(form) : undefined;
  if (button && !(button.name in fields)) defaults.push([button.name, button.value]);
  const values: FormFields = { ...fields };
  const csrfField = operation.form?.csrf_field ?? (form ? csrfControl(form)?.name : undefined) ?? meta?.param;
  if (csrfField) {
    const fresh = form?.controls.find((control) => control.name === csrfField)?.value || meta?.token;
    if (csrfMode === "omit") values[csrfField] = undefined;
    else if (csrfMode === "fresh" && fresh) values[csrfField] = fresh;
  }
  const pairs = overlayFields(defaults, values);

  const spec = formRequest({
    url: form?.action ?? joinUrl(pool.baseUrl, actionPath),
    method: method === "GET" ? "GET" : (form?.method ?? method),
    enctype: form?.enctype ?? operation.form?.enctype ?? operation.request_body?.content_type ?? "",
    fields: pairs,
    referer: pageUrl,
  });
  const chain =
    options.followRedirects === false ? [await send(spec)] : (await followRedirects(send, spec)).chain;
  return {
    exchange: chain.at(-1)!,
    chain,
    page,
    form,
    csrf: csrfField
      ? { field: csrfField, sent: pairs.some(([name, value]) => name === csrfField && value !== "") }
      : undefined,
  };
}

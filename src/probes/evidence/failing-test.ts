import type { TargetProfile } from "../../targets/profile-schema.ts";
import { credentialVariable } from "../http/curl.ts";
import { CSRF_COOKIES, CSRF_HEADER } from "../session/csrf.ts";
import { secretVariableName } from "../session/secret-reference.ts";
import { SIGN_IN_SEGMENT } from "../session/signed-out.ts";
import { BROWSER_HELPERS, BROWSER_IMPORT, needsBrowser, renderedLacksElement } from "./browser-assertion.ts";

/** One request of a reproduction. `{{step.id}}` in `path`/`body` is replaced by an id captured earlier. */
export interface ReproStep {
  /** A name later steps and assertions refer to. */
  name: string;
  /** Profile user, or undefined for anonymous. */
  as?: string;
  method: string;
  /** Path with query, relative to the base URL. */
  path: string;
  body?: string;
  contentType?: string;
  headers?: Record<string, string>;
  /** Capture the id of what this step created, for `{{name.id}}` later. */
  captureId?: { parameter?: string };
  /** Send a token forged from `from`'s fresh session token instead of signing in as `as`. */
  forge?: TokenForgery;
  /** Load this page first (as `as`): its hidden fields, a CSRF token among them, join the form body. */
  formPage?: string;
  /**
   * false: sent without the anti-forgery header the application's scripts add to a signed-in unsafe request
   * (a cross-site forgery). By default the test adds it, as the probe's session did.
   */
  csrf?: false;
  /** Sent once per process however often the test repeats (a warm-up before a timed request). */
  once?: boolean;
  /** Sent this many times, the fastest answer standing for the step: a timing a busy machine's pauses would blur. */
  fastestOf?: number;
}

/**
 * How a step alters a signed-in user's JWT (`claims`, when given, are set in its payload first): `alg-none`
 * re-labels the header and drops the signature; `claims` keeps the original signature; `hmac` signs with
 * `secret`; `random-signature` puts random bytes in its place; `expired` signs in again (asking for the
 * shortest lifetime through `lifetime`, when given) and waits until `waitMs` past the token's `exp`.
 */
export interface TokenForgery {
  from: string;
  kind: "alg-none" | "claims" | "hmac" | "random-signature" | "expired";
  alg?: string;
  claims?: Record<string, unknown>;
  secret?: string;
  lifetime?: { field: string; value: number };
  waitMs?: number;
}

export type ReproAssertion =
  | { kind: "status_below"; step: string; value: number; message: string }
  | { kind: "status_in"; step: string; values: number[]; message: string }
  | { kind: "not_success"; step: string; message: string }
  | { kind: "json_has"; step: string; path: string; message: string }
  | { kind: "json_type"; step: string; path: string; type: string; message: string }
  | { kind: "json_lacks"; step: string; path: string; message: string }
  | { kind: "json_equals"; step: string; path: string; value: unknown; message: string }
  | { kind: "json_not_equals"; step: string; path: string; value: unknown; message: string }
  | { kind: "body_lacks"; step: string; text: string; message: string }
  /** Like body_lacks, but also in the answer's JSON strings and HTML-decoded text, as probes look. */
  | { kind: "answer_lacks"; step: string; text: string; message: string }
  /** The answer does not show the number `digits` (filled like a path), plain or grouped by thousands. */
  | { kind: "number_lacks"; step: string; digits: string; message: string }
  | { kind: "body_not_matches"; step: string; pattern: string; flags?: string; message: string }
  | { kind: "same_response"; steps: [string, string]; strip?: string[]; message: string }
  | { kind: "denied_or_lacks"; step: string; texts: string[]; message: string }
  | { kind: "duration_below"; step: string; ms: number; message: string }
  /** The second step may take at most `factor` times the first plus `slackMs`: time that grows with the input. */
  | {
      kind: "duration_growth_below";
      steps: [string, string];
      factor: number;
      slackMs: number;
      message: string;
    }
  | { kind: "list_contains_id"; step: string; idOf: string; message: string }
  | { kind: "header_present"; step: string; header: string; message: string }
  | { kind: "header_not"; step: string; header: string; value: string; message: string }
  /** The header, URL-decoded (a redirect's Location carries its query encoded), must not match `pattern`. */
  | {
      kind: "header_not_matches";
      step: string;
      header: string;
      pattern: string;
      flags?: string;
      message: string;
    }
  /**
   * The cookie `cookie` as signing in as `as` sets it: HttpOnly when `httpOnly`, Secure when `secure`, kept
   * at most `maxDays` days when given.
   */
  | {
      kind: "sign_in_cookie";
      as: string;
      cookie: string;
      httpOnly?: boolean;
      secure?: boolean;
      maxDays?: number;
      message: string;
    }
  /** The page, opened in Chromium as `as` once its requests settle, has no element named `tag`. */
  | { kind: "rendered_lacks_element"; page: string; as?: string; tag: string; message: string };

export interface ReproScript {
  title: string;
  steps: ReproStep[];
  assertions: ReproAssertion[];
}

/** How the generated test signs a user in: the profile's recipe with secrets as environment variables. */
function userTable(profile: TargetProfile | undefined, used: ReadonlySet<string>): Record<string, unknown> {
  const table: Record<string, unknown> = {};
  for (const user of profile?.users ?? []) {
    if (!used.has(user.name)) continue;
    table[user.name] = {
      username: user.username ?? user.name,
      passwordVariable: user.password ? secretVariableName(user.password) : undefined,
      tokenVariable: user.token ? secretVariableName(user.token) : undefined,
      overrideVariable: credentialVariable(user.name),
    };
  }
  return table;
}

/**
 * A self-contained `node --test` file (Node 20, fetch, no dependencies) that replays the steps and asserts
 * the CORRECT behaviour: it fails while the defect exists and passes once it is fixed.
 */
export function renderFailingTest(
  script: ReproScript,
  profile: TargetProfile | undefined,
  baseUrl: string,
): string {
  const used = new Set(
    script.steps
      .flatMap((step) => [step.as, step.forge?.from])
      .concat(script.assertions.map((assertion) => ("as" in assertion ? assertion.as : undefined)))
      .filter((name): name is string => name !== undefined),
  );
  const login = profile?.auth?.login;
  const loginConfig = login
    ? {
        kind: login.kind,
        endpoint: login.endpoint,
        page: login.page,
        body: login.body,
        tokenFrom: login.token_from,
        applyAs: login.apply_as,
        scheme: login.scheme,
      }
    : { kind: "bearer", applyAs: "header:Authorization", scheme: "Bearer" };
  const lines: string[] = [];
  lines.push(`// Generated by qaas: ${oneLine(script.title)}`);
  lines.push("// Fails while the defect exists; passes once it is fixed.");
  lines.push(`// Run: QAAS_BASE_URL=${baseUrl} node --test <this file>`);
  const waits = expectedWaitSeconds(script);
  // Read by qaas's test runner: the time this test spends waiting on purpose, on top of its requests.
  if (waits > 0) lines.push(`// ${WAITS_MARK} ${waits}`);
  // Read by qaas's test runner too: the test times the target, so it runs with the target to itself.
  if (script.assertions.some((assertion) => assertion.kind.startsWith("duration_")))
    lines.push(`// ${TIMED_MARK}`);
  if (used.size > 0) {
    lines.push(
      "// Credentials come from the same environment variables as the target profile's secret_ref entries,",
    );
    lines.push(`// or directly from ${[...used].map(credentialVariable).join(", ")}.`);
  }
  lines.push('import assert from "node:assert/strict";');
  if (script.steps.some((step) => step.forge))
    lines.push('import { createHmac, randomBytes } from "node:crypto";');
  lines.push('import { test } from "node:test";');
  if (needsBrowser(script.assertions)) lines.push(BROWSER_IMPORT);
  lines.push("");
  lines.push(`const BASE_URL = process.env.QAAS_BASE_URL ?? ${JSON.stringify(baseUrl)};`);
  lines.push(`const LOGIN = ${JSON.stringify(loginConfig)};`);
  lines.push(`const USERS = ${JSON.stringify(userTable(profile, used))};`);
  lines.push(
    `const CSRF_COOKIES = ${JSON.stringify(CSRF_COOKIES.map(({ cookie, header }) => [cookie.source, cookie.flags, header]))}.map(([source, flags, header]) => [new RegExp(source, flags), header]);`,
  );
  lines.push(
    `const CSRF_HEADER = new RegExp(${JSON.stringify(CSRF_HEADER.source)}, ${JSON.stringify(CSRF_HEADER.flags)});`,
  );
  lines.push(HELPERS);
  if (needsBrowser(script.assertions)) lines.push(BROWSER_HELPERS);
  lines.push("");
  lines.push(`test(${JSON.stringify(oneLine(script.title))}, async () => {`);
  lines.push("  const steps = {};");
  for (const step of script.steps) {
    const name = JSON.stringify(step.name);
    const send = `call(steps, ${JSON.stringify(step)})`;
    lines.push(
      step.once
        ? `  steps[${name}] = await once(${name}, () => ${send});`
        : step.fastestOf && step.fastestOf > 1
          ? `  steps[${name}] = await fastest(${step.fastestOf}, () => ${send});`
          : `  steps[${name}] = await ${send};`,
    );
  }
  for (const assertion of script.assertions) lines.push(`  ${renderAssertion(assertion)}`);
  lines.push("});");
  lines.push("");
  return lines.join("\n");
}

/** `[0].email` or `items[2].name` as an assertion's path (`0.email`, `items.2.name`): dots only, none leading. */
export function dottedPath(path: string): string {
  return path.replace(/\[(\d+)\]/g, ".$1").replace(/^\./, "");
}

/** The header line a test that waits on purpose carries, with the seconds it waits. */
export const WAITS_MARK = "qaas-waits-seconds:";
/** The comment line of a test that asserts on how long the target took to answer. */
export const TIMED_MARK = "qaas-times-the-target";

/**
 * Seconds the test waits on purpose: an expired-token step waits out the token's life (a sign-in asking
 * for the shortest one, else up to a minute) and then the server's leeway.
 */
function expectedWaitSeconds(script: ReproScript): number {
  const waits = script.steps.flatMap((step) =>
    step.forge?.kind === "expired"
      ? [Math.ceil((step.forge.waitMs ?? 0) / 1000) + (step.forge.lifetime ? 5 : 60)]
      : [],
  );
  return waits.length > 0 ? Math.max(...waits) : 0;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function ref(step: string): string {
  return `steps[${JSON.stringify(step)}]`;
}

function renderAssertion(assertion: ReproAssertion): string {
  const message = JSON.stringify(assertion.message);
  switch (assertion.kind) {
    case "status_below":
      return `assert.ok(${ref(assertion.step)}.status < ${assertion.value}, ${message} + " (got " + ${ref(assertion.step)}.status + ")");`;
    case "status_in":
      return `assert.ok(${JSON.stringify(assertion.values)}.includes(${ref(assertion.step)}.status), ${message} + " (got " + ${ref(assertion.step)}.status + ")");`;
    case "not_success":
      return `assert.ok(${ref(assertion.step)}.status < 200 || ${ref(assertion.step)}.status >= 300, ${message} + " (got " + ${ref(assertion.step)}.status + ")");`;
    // A `*` in the path stands for every item of the list: the probe judged them all, not the first.
    case "json_has":
      return `assert.ok(valuesAt(${ref(assertion.step)}.json, ${JSON.stringify(assertion.path)}).every((value) => value !== undefined), ${message});`;
    case "json_type": {
      const values = `valuesAt(${ref(assertion.step)}.json, ${JSON.stringify(assertion.path)})`;
      const type = JSON.stringify(assertion.type);
      return `assert.ok(${values}.every((value) => typeMatches(value, ${type})), ${message} + " (got " + typeName(${values}.find((value) => !typeMatches(value, ${type}))) + ")");`;
    }
    case "json_lacks":
      return `assert.ok(valuesAt(${ref(assertion.step)}.json, ${JSON.stringify(assertion.path)}).every((value) => value === undefined), ${message});`;
    case "json_equals":
      return `assert.deepEqual(valueAt(${ref(assertion.step)}.json, ${JSON.stringify(assertion.path)}), ${JSON.stringify(assertion.value)}, ${message});`;
    case "json_not_equals":
      return `assert.notDeepEqual(valueAt(${ref(assertion.step)}.json, ${JSON.stringify(assertion.path)}), ${JSON.stringify(assertion.value)}, ${message});`;
    case "body_lacks":
      return `assert.ok(!${ref(assertion.step)}.text.includes(fill(steps, ${JSON.stringify(assertion.text)})), ${message});`;
    case "answer_lacks":
      return `assert.ok(!answerTexts(${ref(assertion.step)}).some((form) => form.includes(fill(steps, ${JSON.stringify(assertion.text)}))), ${message});`;
    case "number_lacks":
      return `assert.ok(!showsNumber(${ref(assertion.step)}, fill(steps, ${JSON.stringify(assertion.digits)})), ${message});`;
    // Probes look for an error's text in every form of the answer: a traceback inside a JSON string has
    // its quotes and line breaks escaped on the wire.
    case "body_not_matches":
      return `assert.ok(!answerTexts(${ref(assertion.step)}).some((form) => new RegExp(${JSON.stringify(assertion.pattern)}, ${JSON.stringify(assertion.flags ?? "")}).test(form)), ${message});`;
    case "same_response": {
      const strip = JSON.stringify(assertion.strip ?? []);
      const [first, second] = assertion.steps.map(ref) as [string, string];
      return `assert.deepEqual([${second}.status, stripEcho(${second}.text, ${strip})], [${first}.status, stripEcho(${first}.text, ${strip})], ${message});`;
    }
    case "denied_or_lacks":
      return `assert.ok([401, 403, 404].includes(${ref(assertion.step)}.status) || ${JSON.stringify(assertion.texts)}.every((text) => !${ref(assertion.step)}.text.includes(fill(steps, text))), ${message} + " (got " + ${ref(assertion.step)}.status + ")");`;
    case "duration_below":
      return `assert.ok(${ref(assertion.step)}.ms < ${assertion.ms}, ${message} + " (took " + ${ref(assertion.step)}.ms + " ms)");`;
    case "duration_growth_below": {
      const [small, large] = assertion.steps.map(ref) as [string, string];
      return `assert.ok(${large}.ms < ${assertion.factor} * ${small}.ms + ${assertion.slackMs}, ${message} + " (" + Math.round(${small}.ms) + " ms, then " + Math.round(${large}.ms) + " ms)");`;
    }
    case "header_present":
      return `assert.ok(${ref(assertion.step)}.headers.get(${JSON.stringify(assertion.header)}), ${message});`;
    case "header_not":
      return `assert.notEqual(${ref(assertion.step)}.headers.get(${JSON.stringify(assertion.header)}), ${JSON.stringify(assertion.value)}, ${message});`;
    case "header_not_matches": {
      const header = `(${ref(assertion.step)}.headers.get(${JSON.stringify(assertion.header)}) ?? "")`;
      const decoded = `(() => { try { return decodeURIComponent(${header}.replace(/\\+/g, " ")); } catch { return ${header}; } })()`;
      return `assert.ok(!new RegExp(${JSON.stringify(assertion.pattern)}, ${JSON.stringify(assertion.flags ?? "")}).test(${decoded}), ${message});`;
    }
    case "rendered_lacks_element":
      return renderedLacksElement(assertion);
    case "sign_in_cookie": {
      const rules = JSON.stringify({
        httpOnly: assertion.httpOnly,
        secure: assertion.secure,
        maxDays: assertion.maxDays,
      });
      const line = `(await signIn(${JSON.stringify(assertion.as)})).setCookieLines.find((line) => line.split("=", 1)[0].trim() === ${JSON.stringify(assertion.cookie)})`;
      return `{ const line = ${line}; assert.ok(line, "signing in set no cookie " + ${JSON.stringify(assertion.cookie)}); assert.ok(cookieKeeps(line, ${rules}), ${message} + " (got " + line.split(";").slice(1).join(";").trim() + ")"); }`;
    }
    case "list_contains_id":
      return `assert.ok(listIds(${ref(assertion.step)}.json).includes(String(${ref(assertion.idOf)}.id)), ${message});`;
    default:
      return "";
  }
}

const HELPERS = String.raw`
// Repeated runs in one process share a sign-in that answers a token sent in a header: the token carries no
// state a run's steps could change, and each sign-in costs the target a password hash. A cookie session is
// signed in afresh by every run, since its server-side state may be what an earlier run's steps changed.
const sessions = LOGIN.kind !== "form" && !/^cookie/.test(LOGIN.applyAs ?? "") ? (globalThis.qaasSessions ??= {}) : {};

async function credential(user) {
  if (sessions[user]) return sessions[user];
  const entry = USERS[user];
  const override = process.env[entry.overrideVariable];
  if (override) return (sessions[user] = { token: override, cookies: {} });
  if (LOGIN.kind === "bearer" || LOGIN.kind === "api_key") {
    return (sessions[user] = { token: process.env[entry.tokenVariable] ?? "", cookies: {} });
  }
  return (sessions[user] = await signIn(user));
}

async function signIn(user, extra = {}) {
  const entry = USERS[user];
  const password = process.env[entry.passwordVariable] ?? "";
  const [method, path] = LOGIN.endpoint.split(/\s+/);
  // A form sign-in starts on the page that shows the form: its cookies and hidden fields (a CSRF token).
  let page = { cookies: {}, hidden: {}, defaults: {}, names: {} };
  if (LOGIN.kind === "form") {
    for (const candidate of [LOGIN.page ?? path, "/login"]) {
      page = await loadPage(candidate, {});
      if (page.names.password) break;
    }
  }
  const template = LOGIN.body ?? { [page.names.username ?? "username"]: "{username}", [page.names.password ?? "password"]: "{password}" };
  const fields = { ...page.defaults, ...page.hidden };
  for (const [key, value] of Object.entries(template)) {
    fields[key] = value.split("{username}").join(entry.username).split("{password}").join(password);
  }
  Object.assign(fields, extra);
  const response = await fetch(new URL(path, BASE_URL), {
    method,
    redirect: "manual",
    headers: {
      "content-type": LOGIN.kind === "json" ? "application/json" : "application/x-www-form-urlencoded",
      ...(Object.keys(page.cookies).length > 0 ? { cookie: cookieHeader(page.cookies) } : {}),
    },
    body: LOGIN.kind === "json" ? JSON.stringify(fields) : new URLSearchParams(fields).toString(),
  });
  const cookies = { ...page.cookies, ...setCookies(response) };
  const text = await response.text();
  let json;
  try { json = JSON.parse(text); } catch {}
  let token;
  const from = (LOGIN.tokenFrom ?? "").match(/^(body|header|cookie):(.+)$/);
  if (from && from[1] === "body") token = valueAt(json, from[2]);
  else if (from && from[1] === "header") token = (response.headers.get(from[2]) ?? "").replace(/^(Bearer|Token)\s+/i, "");
  else if (from && from[1] === "cookie") token = cookies[from[2]];
  else {
    const applyCookie = (LOGIN.applyAs.match(/^cookie:(.+)$/) ?? [])[1];
    token = (applyCookie && cookies[applyCookie]) ?? ["token", "access_token", "accessToken", "jwt", "id_token", "auth_token"].map((key) => valueAt(json, key) ?? valueAt(json, "data." + key)).find(Boolean) ?? Object.values(cookies)[0];
  }
  assert.ok(token, "sign-in as " + user + " failed (" + response.status + ")");
  // A refused form sign-in still sets cookies, but lands back on the sign-in page: going on would test as nobody.
  if (LOGIN.kind === "form") {
    const back = response.status >= 300 && response.status < 400 ? response.headers.get("location") : undefined;
    const refused = back ? isSignInPage(new URL(back, BASE_URL).pathname, path) : response.status === 200 && showsSignInForm(text, path);
    assert.ok(!refused, "sign-in as " + user + " was refused (" + response.status + " back to the sign-in page)");
  }
  return { token: String(token), cookies, setCookieLines: response.headers.getSetCookie() };
}

/** Whether a Set-Cookie line has the attributes asked for, and a lifetime (Max-Age, else Expires) within maxDays. */
function cookieKeeps(line, rules) {
  const attributes = line.split(";").slice(1).map((part) => part.trim().toLowerCase());
  if (rules.httpOnly && !attributes.includes("httponly")) return false;
  if (rules.secure && !attributes.includes("secure")) return false;
  if (rules.maxDays === undefined) return true;
  const maxAge = attributes.find((part) => part.startsWith("max-age="));
  const expires = attributes.find((part) => part.startsWith("expires="));
  const days = maxAge ? Number(maxAge.slice(8)) / 86400 : expires ? (Date.parse(expires.slice(8)) - Date.now()) / 86400000 : 0;
  return days <= rules.maxDays;
}

function isSignInPage(pathname, endpointPath) {
  const known = [LOGIN.page, endpointPath].filter(Boolean).map((known) => new URL(known, BASE_URL).pathname);
  const last = pathname.replace(/\/+$/, "").split("/").pop() ?? "";
  return known.includes(pathname) || new RegExp(${JSON.stringify(SIGN_IN_SEGMENT.source)}, "i").test(last);
}

function showsSignInForm(html, endpointPath) {
  return [...html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)].some(([, open, inner]) => {
    const action = (open.match(/\saction\s*=\s*["']?([^"'\s>]*)/i) ?? [])[1];
    return action !== undefined && /type\s*=\s*["']?password/i.test(inner) && isSignInPage(new URL(action, BASE_URL).pathname, endpointPath);
  });
}

// A step marked once (a warm-up) is sent by the first of repeated runs in one process; the others reuse it.
const ONCE = (globalThis.qaasOnceSteps ??= new Map());

function once(name, send) {
  if (!ONCE.has(name)) ONCE.set(name, send());
  return ONCE.get(name);
}

// A timed step sent several times stands for its fastest answer: pauses only ever add time.
async function fastest(times, send) {
  let best;
  for (let sent = 0; sent < times; sent += 1) {
    const result = await send();
    if (!best || result.ms < best.ms) best = result;
  }
  return best;
}

// Repeated runs in one process share the expired token: it stays expired, and the wait is paid once.
const EXPIRED = (globalThis.qaasExpiredTokens ??= new Map());

function expiredToken(how) {
  const key = JSON.stringify(how);
  if (!EXPIRED.has(key)) EXPIRED.set(key, waitUntilExpired(how));
  return EXPIRED.get(key);
}

async function waitUntilExpired(how) {
  const { token } = how.lifetime ? await signIn(how.from, { [how.lifetime.field]: how.lifetime.value }) : await credential(how.from);
  const exp = JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString("utf8")).exp;
  const wait = exp * 1000 + (how.waitMs ?? 0) - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  return token;
}

const UNIQUE = Math.random().toString(36).slice(2, 8);
const UNIQUE_NUMBER = String(100000 + Math.floor(Math.random() * 900000));

// A step that created nothing to refer to (refused, or its answer named no id) stops the test as a set-up
// failure: sent on with an empty id, the steps after it would prove nothing and could pass.
function fill(steps, text) {
  return text.split("{{unique}}").join(UNIQUE).split("{{unique-number}}").join(UNIQUE_NUMBER).replace(/\{\{([\w-]+)\.id\}\}/g, (_, name) => {
    const id = steps[name]?.id;
    if (id === undefined || id === null || id === "") throw new Error("set-up failed: step " + name + " created nothing to refer to (answered " + steps[name]?.status + ")");
    return encodeURIComponent(String(id));
  });
}

async function call(steps, step) {
  const headers = { accept: "application/json, text/html;q=0.9, */*;q=0.8", ...(step.headers ?? {}) };
  let url = new URL(fill(steps, step.path), BASE_URL).toString();
  if (step.body !== undefined) headers["content-type"] = step.contentType ?? "application/json";
  const session = step.as && !step.forge ? await credential(step.as) : undefined;
  const target = url;
  if (step.forge) {
    const forged = step.forge.kind === "expired" ? await expiredToken(step.forge) : forge((await credential(step.forge.from)).token, step.forge);
    url = applyCredential(headers, target, forged, {});
  }
  let body = step.body === undefined ? undefined : fill(steps, step.body);
  if (step.formPage) {
    const page = await loadPage(fill(steps, step.formPage), session?.cookies ?? {}, headers, target);
    if (session) remember(session, page.cookies);
    else headers.cookie = cookieHeader(page.cookies);
    const fields = new URLSearchParams(body ?? "");
    // The page's token replaces any recorded one; the form's other fields keep the values the step gives.
    for (const [field, value] of Object.entries(page.hidden)) fields.set(field, value);
    for (const [field, value] of Object.entries(page.defaults)) if (!fields.has(field)) fields.set(field, value);
    body = fields.toString();
  }
  if (session) url = applyCredential(headers, target, session.token, session.cookies);
  if (session && step.csrf !== false) addCsrfHeader(headers, step.method, session.cookies);
  const started = performance.now();
  const response = await fetch(url, { method: step.method, headers, body, redirect: "manual" });
  const text = await response.text();
  const ms = performance.now() - started;
  if (session) remember(session, setCookies(response));
  let json;
  try { json = JSON.parse(text); } catch {}
  const result = { status: response.status, headers: response.headers, text, json, ms };
  if (step.captureId) result.id = idOf(json, step.captureId.parameter) ?? locationId(response.headers.get("location") ?? "") ?? sentKey(body, step.captureId.parameter);
  return result;
}

/** The value the create sent under the item's path parameter (a title, a slug), when the answer names no id. */
function sentKey(body, parameter) {
  if (!parameter || body === undefined) return undefined;
  let fields;
  try { fields = JSON.parse(body); } catch { fields = Object.fromEntries(new URLSearchParams(body)); }
  const value = fields && typeof fields === "object" ? fields[parameter] : undefined;
  return typeof value === "string" || typeof value === "number" ? value : undefined;
}

/**
 * Puts a credential on a request the way the profile says; a form sign-in's credential is its cookies, or,
 * when it set none (an OAuth2 password grant), the token of its answer.
 */
function applyCredential(headers, url, token, cookies) {
  const [kind, name = "Authorization"] = LOGIN.applyAs.split(/:(.*)/s);
  if (kind === "cookie") headers.cookie = cookieHeader({ ...cookies, [name]: token });
  else if (kind === "query") return url + (url.includes("?") ? "&" : "?") + encodeURIComponent(name) + "=" + encodeURIComponent(token);
  else if (LOGIN.kind === "form" && !LOGIN.tokenFrom && Object.keys(cookies).length > 0) headers.cookie = cookieHeader(cookies);
  else headers[name.toLowerCase()] = name.toLowerCase() === "authorization" ? LOGIN.scheme + " " + token : token;
  return url;
}

/**
 * A signed-in unsafe request carries the anti-forgery header the application's own scripts add: its readable
 * CSRF cookie echoed (Django's csrftoken as X-CSRFToken, XSRF-TOKEN as X-XSRF-TOKEN), as the probe's session did.
 */
function addCsrfHeader(headers, method, cookies) {
  if (["GET", "HEAD", "OPTIONS", "TRACE"].includes(method.toUpperCase())) return;
  if (Object.keys(headers).some((name) => CSRF_HEADER.test(name))) return;
  for (const [name, value] of Object.entries(cookies)) {
    // csurf keeps its secret in _csrf: echoing it proves nothing.
    if (name === "_csrf" || !value) continue;
    const known = CSRF_COOKIES.find(([pattern]) => pattern.test(name));
    if (!known) continue;
    let token = value;
    try { token = decodeURIComponent(value); } catch {}
    headers[known[1].toLowerCase()] = token;
    return;
  }
}

/** Keeps the cookies an answer sets, as a browser does: a session cookie that rotates stays current. */
function remember(session, cookies) {
  Object.assign(session.cookies, cookies);
  const [kind, name] = LOGIN.applyAs.split(/:(.*)/s);
  if (kind === "cookie" && cookies[name]) session.token = cookies[name];
}

/**
 * Loads a page as a browser would and reads the form a submission comes from: the one posting to
 * the action when given, else the one with a password field (sign-in), else the first. Its hidden fields (a
 * CSRF token) and its submit button go with the submission, as a browser sends them.
 */
async function loadPage(path, cookies, headers = {}, action) {
  const response = await fetch(new URL(path, BASE_URL), {
    headers: { accept: "text/html", ...(headers.authorization ? { authorization: headers.authorization } : {}), cookie: cookieHeader(cookies) },
    redirect: "manual",
  });
  const html = await response.text();
  const forms = [...html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)].map(([, open, inner]) => readForm(open, inner));
  const form =
    (action && forms.find((candidate) => candidate.action && new URL(candidate.action, BASE_URL).pathname === new URL(action, BASE_URL).pathname)) ??
    forms.find((candidate) => candidate.names.password) ??
    forms[0] ?? { hidden: {}, defaults: {}, names: {} };
  return { cookies: setCookies(response), hidden: form.hidden, defaults: form.defaults, names: form.names };
}

function readForm(open, inner) {
  const attribute = (tag, key) => (tag.match(new RegExp("\\s" + key + "\\s*=\\s*(?:\"([^\"]*)\"|'([^']*)'|([^\\s>]+))", "i")) ?? []).slice(1).find((value) => value !== undefined);
  const hidden = {};
  const defaults = {};
  const names = {};
  for (const [tag, element] of inner.matchAll(/<(input|button)\b[^>]*>/gi)) {
    const name = attribute(tag, "name");
    const type = (attribute(tag, "type") ?? (element.toLowerCase() === "button" ? "submit" : "text")).toLowerCase();
    if (!name) continue;
    const value = decodeEntities(attribute(tag, "value") ?? "");
    if (type === "hidden") hidden[name] = value;
    else if (type === "submit") defaults[name] ??= value;
    else if ((type === "checkbox" || type === "radio") && /\schecked\b/i.test(tag)) defaults[name] ??= value || "on";
    else if (type === "password") names.password ??= name;
    else if (["text", "email", "search", "number", "tel", "url"].includes(type)) {
      if (["text", "email"].includes(type)) names.username ??= name;
      if (value) defaults[name] ??= value;
    }
  }
  for (const [, open, text] of inner.matchAll(/<textarea\b([^>]*)>([\s\S]*?)<\/textarea>/gi)) {
    const name = attribute(open, "name");
    if (name) defaults[name] ??= decodeEntities(text);
  }
  for (const [, open, options] of inner.matchAll(/<select\b([^>]*)>([\s\S]*?)<\/select>/gi)) {
    const name = attribute(open, "name");
    const all = [...options.matchAll(/<option\b([^>]*)>([^<]*)/gi)];
    const chosen = all.find(([, tag]) => /\sselected\b/i.test(tag)) ?? all[0];
    if (name && chosen) defaults[name] ??= decodeEntities(attribute(chosen[1], "value") ?? chosen[2].trim());
  }
  return { action: attribute(open, "action"), hidden, defaults, names };
}

function decodeEntities(text) {
  return text.replace(/&quot;/g, '"').replace(/&#39;|&#x27;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

/** The raw answer, its JSON strings (escaped on the wire) and its HTML-decoded text: where a marker hides. */
function answerTexts(result) {
  const strings = [];
  const collect = (value) => {
    if (typeof value === "string" || typeof value === "number") strings.push(String(value));
    else if (Array.isArray(value)) value.forEach(collect);
    else if (value && typeof value === "object") for (const [key, inner] of Object.entries(value)) { strings.push(key); collect(inner); }
  };
  collect(result.json);
  return [result.text, strings.join("\n"), decodeEntities(result.text)];
}

/** Whether the answer shows the number digits, written plain or grouped by thousands (123,456 or 123 456). */
function showsNumber(result, digits) {
  const groups = digits.match(/\d{1,3}(?=(?:\d{3})*$)/g) ?? [digits];
  const pattern = new RegExp("(?<!\\d)" + groups.join("[,.'\\s\\u00a0\\u202f]?") + "(?!\\d)");
  return answerTexts(result).some((form) => pattern.test(form));
}

function setCookies(response) {
  const cookies = {};
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(";");
    const index = pair.indexOf("=");
    if (index > 0) cookies[pair.slice(0, index).trim()] = pair.slice(index + 1).trim();
  }
  return cookies;
}

function cookieHeader(cookies) {
  return Object.entries(cookies).map(([key, value]) => key + "=" + value).join("; ");
}

function forge(token, how) {
  const [head, body, signature] = token.split(".");
  const decode = (part) => JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
  const encode = (value) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const payload = how.claims ? encode({ ...decode(body), ...how.claims }) : body;
  if (how.kind === "alg-none") return encode({ ...decode(head), alg: how.alg ?? "none" }) + "." + payload + ".";
  if (how.kind === "random-signature") return head + "." + payload + "." + randomBytes(32).toString("base64url");
  if (how.kind === "hmac") {
    const header = decode(head);
    const alg = /^HS(256|384|512)$/i.test(String(header.alg)) ? String(header.alg).toUpperCase() : "HS256";
    const input = encode({ ...header, alg }) + "." + payload;
    return input + "." + createHmac("sha" + alg.slice(2), how.secret ?? "").update(input).digest("base64url");
  }
  return head + "." + payload + "." + signature;
}

/** The record a save redirected to: the last id-like segment (/things/7/edit is 7), else the last. */
function locationId(location) {
  const segments = location.split("?")[0].split("/").filter(Boolean);
  return segments.findLast((segment) => /^\d+$|^[0-9a-f]{8}-[0-9a-f-]{27}$/i.test(segment)) ?? segments.pop();
}

function idOf(json, parameter) {
  const keys = [parameter, "id", "_id", "uuid", "key", "slug"].filter(Boolean);
  const pick = (value) => {
    if (!value || typeof value !== "object") return undefined;
    for (const key of keys) if (typeof value[key] === "string" || typeof value[key] === "number") return value[key];
    return undefined;
  };
  const direct = pick(json);
  if (direct !== undefined) return direct;
  const nested = json && typeof json === "object" ? Object.values(json).filter((value) => value && typeof value === "object" && !Array.isArray(value)) : [];
  return nested.length === 1 ? pick(nested[0]) : undefined;
}

function valueAt(value, path) {
  if (!path) return value;
  let current = value;
  for (const part of path.split(".")) {
    if (current === null || typeof current !== "object") return undefined;
    current = part === "*" ? (Array.isArray(current) ? current[0] : undefined) : current[part];
  }
  return current;
}

/** Every value at the path: a * part fans out over the items of a list (none when the list is empty). */
function valuesAt(value, path) {
  let current = [value];
  for (const part of path ? path.split(".") : []) {
    current = current.flatMap((item) => {
      if (item === null || typeof item !== "object") return [undefined];
      if (part !== "*") return [item[part]];
      return Array.isArray(item) ? item : [undefined];
    });
  }
  return current;
}

function typeName(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function stripEcho(text, values) {
  const escape = (value) => value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
  for (const value of values) {
    const forms = [value, encodeURIComponent(value), escape(value), JSON.stringify(value).slice(1, -1), value.replace(/'/g, "&#x27;")];
    for (const form of forms.sort((a, b) => b.length - a.length)) text = text.split(form).join("");
  }
  return text;
}

function typeMatches(value, expected) {
  const actual = typeName(value);
  return actual === expected || (expected === "number" && actual === "integer");
}

function listIds(json) {
  const items = Array.isArray(json) ? json : Object.values(json ?? {}).find(Array.isArray) ?? [];
  return items.map((item) => String(idOf(item) ?? ""));
}`;

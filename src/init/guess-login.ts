import type { Operation } from "../map/system-map.ts";
import type { FrameworkGuess } from "./guess-framework.ts";
import { lineAt, type Repository } from "./repository.ts";

// The sign-in recipe, guessed from the sign-in operation the inventory holds (a route or a documented
// operation whose path names login, sign-in, session, token or auth): JSON or form from what documents,
// templates and the handler say; body field names from the documented schema, the form's inputs or what
// the handler reads; where the credential comes back from the response schema, the handler, or the
// framework's session cookie.

export interface LoginRecipeGuess {
  kind: "json" | "form";
  endpoint: string;
  body: Record<string, string>;
  token_from: string;
  apply_as?: string;
}

export interface LoginGuess {
  recipe: LoginRecipeGuess;
  /** Where each part came from, for the profile's header comment. */
  from: string[];
}

const SIGN_IN_WORDS: Array<[RegExp, number]> = [
  [/^(?:login|log-in|log_in|signin|sign-in|sign_in)$/i, 0],
  [/^sessions?$/i, 1],
  [/^(?:token|tokens|access-token|access_token)$/i, 2],
  [/^(?:auth|authenticate|authentication)$/i, 3],
];
const NOT_SIGN_IN =
  /^(?:logout|log-out|signout|sign-out|register|signup|sign-up|refresh|reset|forgot|verify|callback|password|me|revoke|introspect)$/i;
const TOKEN_KEY = /["']?\b(access_token|accessToken|auth_token|authToken|id_token|jwt|token)\b["']?\s*:/;
const TOKEN_KEYS = ["access_token", "accessToken", "auth_token", "authToken", "id_token", "jwt", "token"];
const READS_FORM = /request\.form\b|OAuth2PasswordRequestForm|\bForm\(|request\.POST\b|urlencoded/;
const READS_JSON =
  /request\.(?:json|get_json)\b|get_json\(|await\s+\w+\.json\(\)|json\.loads\(\s*request|ctx\.request\.body|\bBaseModel\b/;
const SETS_SESSION =
  /\bsession\s*\[|req\.session\.|request\.session\b|\.set_cookie\(|\.cookie\(|setCookie\(|Set-Cookie|login_user\(|\blogin\(\s*request\b/;
const ROUTE_DECLARATION =
  /\.(?:get|post|put|patch|delete|all|route|api_route)\(\s*["'`/]|^\s*@\w+\.(?:route|get|post|put|patch|delete)\(/;
const USERNAME_FIELD = /^(?:user(?:name)?|email|e-?mail|login|account|identifier|name|handle|phone)$/i;
const USERNAME_LIKE = /user|email|login|account|ident/i;
const PASSWORD_FIELD = /pass|pwd/i;

export function guessLogin(
  operations: readonly Operation[],
  repository: Repository,
  framework: FrameworkGuess | undefined,
): LoginGuess | undefined {
  const candidates = operations
    .filter((operation) => (operation.method === "POST" || operation.method === "ALL") && !operation.graphql)
    .map((operation) => ({ operation, rank: signInRank(operation.path) }))
    .filter((candidate): candidate is { operation: Operation; rank: number } => candidate.rank !== undefined)
    .map(({ operation, rank }) => ({ operation, rank, ...decideKind(operation, repository, framework) }))
    .sort(
      (left, right) =>
        left.rank - right.rank ||
        Number(left.kind === "form") - Number(right.kind === "form") ||
        left.operation.path.length - right.operation.path.length,
    );
  const chosen = candidates[0];
  if (!chosen) return undefined;
  const { operation, kind, handler } = chosen;
  const from = [`POST ${operation.path} (${whereDeclared(operation)})`, chosen.because];
  const fields = fieldNames(operation, kind, chosen.form, handler);
  const names = fields.filter((field) => !PASSWORD_FIELD.test(field));
  const username =
    names.find((field) => USERNAME_FIELD.test(field)) ?? names.find((field) => USERNAME_LIKE.test(field));
  const password = fields.find((field) => PASSWORD_FIELD.test(field));
  from.push(
    username || password
      ? `body fields ${[username, password].filter(Boolean).join(", ")} from ${fields.source}`
      : "body fields not found: username and password assumed",
  );
  const credential = credentialOf(operation, kind, handler, repository, framework);
  from.push(credential.because);
  return {
    recipe: {
      kind,
      endpoint: `POST ${operation.path}`,
      body: { [username ?? "username"]: "{username}", [password ?? "password"]: "{password}" },
      token_from: credential.token_from,
      ...(credential.apply_as ? { apply_as: credential.apply_as } : {}),
    },
    from,
  };
}

/** 0 for login/sign-in … 3 for auth; undefined when the path is not a sign-in (or is a sign-out, a sign-up…). */
export function signInRank(path: string): number | undefined {
  const segments = path
    .split(/[/?#]/)
    .filter((segment) => segment !== "" && !segment.startsWith("{") && !segment.startsWith(":"));
  if (segments.some((segment) => NOT_SIGN_IN.test(segment))) return undefined;
  const ranks = segments.flatMap((segment) =>
    SIGN_IN_WORDS.filter(([pattern]) => pattern.test(segment)).map(([, rank]) => rank),
  );
  return ranks.length > 0 ? Math.min(...ranks) : undefined;
}

interface HandlerText {
  file: string;
  line: number;
  text: string;
}

interface FormSeen {
  at: string;
  inputs: string[];
}

function decideKind(
  operation: Operation,
  repository: Repository,
  framework: FrameworkGuess | undefined,
): { kind: "json" | "form"; because: string; handler?: HandlerText; form?: FormSeen } {
  const handler = handlerText(operation, repository);
  const form = formPostingTo(operation.path, repository);
  const declared = operation.request_body?.content_type;
  // A document says how the body is sent; a form posting to it shows it better than a handler's reads do.
  const inferred = declared && !operation.documented && form ? undefined : declared;
  if (inferred) {
    const kind = /json/i.test(inferred) ? "json" : "form";
    return {
      kind,
      because: `${inferred} body (${operation.documented ? "documented" : "from the handler"})`,
      handler,
      form,
    };
  }
  if (form) return { kind: "form", because: `a form posts to it (${form.at})`, handler, form };
  if (handler && READS_FORM.test(handler.text))
    return {
      kind: "form",
      because: `the handler reads form fields (${handler.file}:${handler.line})`,
      handler,
    };
  if (handler && READS_JSON.test(handler.text))
    return {
      kind: "json",
      because: `the handler reads a JSON body (${handler.file}:${handler.line})`,
      handler,
    };
  const api =
    /(?:^|\/)api(?:\/|$)|\/v\d+\//.test(operation.path) ||
    ["fastapi", "connexion", "nestjs"].includes(framework?.name ?? "");
  if (api) return { kind: "json", because: "the application serves an API", handler };
  const rendersHtml = repository.templateFiles.length > 0;
  return rendersHtml
    ? { kind: "form", because: "the application renders HTML pages", handler }
    : { kind: "json", because: "no form posts to it", handler };
}

/** The handler's text: from its declaration to the next route declaration (at most 60 lines). */
function handlerText(operation: Operation, repository: Repository): HandlerText | undefined {
  const located = operation.handler?.file
    ? { file: operation.handler.file, line: operation.handler.line ?? 1 }
    : operationIdHandler(operation, repository);
  if (!located) return undefined;
  const lines = repository.read(located.file).split("\n");
  const window: string[] = [];
  for (let index = located.line - 1; index < lines.length && window.length < 60; index += 1) {
    const line = lines[index] ?? "";
    if (window.length > 1 && ROUTE_DECLARATION.test(line)) break;
    window.push(line);
  }
  return window.length > 0 ? { ...located, text: window.join("\n") } : undefined;
}

/** connexion and friends name the handler `package.module.function` in the document's operationId. */
function operationIdHandler(
  operation: Operation,
  repository: Repository,
): { file: string; line: number } | undefined {
  const match = /^([\w.]+)\.(\w+)$/.exec(operation.operation_id ?? "");
  if (!match) return undefined;
  const file = `${match[1]!.split(".").join("/")}.py`;
  if (!repository.codeFiles.includes(file)) return undefined;
  const text = repository.read(file);
  const definition = new RegExp(`^\\s*(?:async\\s+)?def\\s+${match[2]}\\s*\\(`, "m").exec(text);
  return definition ? { file, line: lineAt(text, definition.index) } : undefined;
}

/**
 * A form in a template or in HTML the code builds that posts to `path`, or a sign-in template whose form
 * posts back to the page it was served at (no action, or one written with `url_for`).
 */
function formPostingTo(path: string, repository: Repository): FormSeen | undefined {
  const files = [
    ...repository.templateFiles,
    ...repository.codeFiles.filter((file) => !file.endsWith(".py")),
  ];
  const pagePath = path.replace(/\/+$/, "") || "/";
  for (const file of files) {
    const text = repository.read(file);
    if (!/<form\b|^\s*form\(/im.test(text)) continue;
    for (const match of text.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>|^\s*form\(([^)]*)\)/gim)) {
      const attributes = match[1] ?? match[3] ?? "";
      if (!/method\s*=\s*["']?post/i.test(attributes)) continue;
      const action = /action\s*=\s*["'`]([^"'`]*)["'`]/i.exec(attributes)?.[1];
      const postsBack =
        (action === undefined || action === "" || action.includes("url_for")) &&
        SIGN_IN_WORDS.some(([pattern]) =>
          pattern.test(
            file
              .split("/")
              .pop()
              ?.replace(/\.[^.]+$/, "") ?? "",
          ),
        ) &&
        signInRank(pagePath) !== undefined;
      const target = action?.split(/[?#]/)[0]?.replace(/\/+$/, "") || undefined;
      if (target !== pagePath && !postsBack) continue;
      const inputs = [
        ...(match[2] ?? "").matchAll(/<(?:input|select|textarea)\b[^>]*\bname\s*=\s*["']([^"']+)["']/gi),
      ].map((input) => input[1] ?? "");
      return { at: `${file}:${lineAt(text, match.index ?? 0)}`, inputs };
    }
  }
  return undefined;
}

function fieldNames(
  operation: Operation,
  kind: "json" | "form",
  form: FormSeen | undefined,
  handler: HandlerText | undefined,
): string[] & { source?: string } {
  const withSource = (names: string[], source: string) => Object.assign(names, { source });
  const properties = operation.request_body?.schema?.properties;
  if (properties && typeof properties === "object" && Object.keys(properties).length > 0)
    return withSource(
      Object.keys(properties),
      operation.documented ? "the documented body" : "the route's body",
    );
  if (kind === "form" && form && form.inputs.length > 0) return withSource(form.inputs, form.at);
  if (handler) {
    const names = [
      ...handler.text.matchAll(
        /(?:\b(?:body|form|json|data|params|payload)(?:\(\))?\.(?:get\(\s*)?|\b(?:body|form|json|data|payload)\s*\[\s*|request\.(?:form|json|POST|data)\s*(?:\.get\(\s*|\[\s*))["']?([A-Za-z_][\w]*)/g,
      ),
    ].map((match) => match[1] ?? "");
    for (const match of handler.text.matchAll(
      /\{\s*([\w\s,:]+?)\s*\}\s*=\s*(?:req|request|ctx\.request)\.body/g,
    ))
      names.push(...(match[1] ?? "").split(",").map((part) => part.split(":")[0]!.trim()));
    const unique = [...new Set(names.filter((name) => name && !/^(?:get|body|json|form)$/.test(name)))];
    if (unique.length > 0) return withSource(unique, `${handler.file}:${handler.line}`);
  }
  return withSource([], "");
}

function credentialOf(
  operation: Operation,
  kind: "json" | "form",
  handler: HandlerText | undefined,
  repository: Repository,
  framework: FrameworkGuess | undefined,
): { token_from: string; apply_as?: string; because: string } {
  const documented = documentedTokenKey(operation);
  if (documented)
    return { token_from: `body:${documented}`, because: `token in body.${documented} (documented response)` };
  const inHandler = handler ? TOKEN_KEY.exec(handler.text)?.[1] : undefined;
  if (inHandler)
    return { token_from: `body:${inHandler}`, because: `token in body.${inHandler} (${handler!.file})` };
  if (kind === "form" || (handler && SETS_SESSION.test(handler.text))) {
    const cookie = sessionCookie(handler, repository, framework);
    return {
      token_from: `cookie:${cookie.name}`,
      apply_as: `cookie:${cookie.name}`,
      because: `session cookie ${cookie.name} (${cookie.because})`,
    };
  }
  return { token_from: "body:token", because: "token assumed in body.token (not found in the handler)" };
}

/** A token-like property of the documented 200/201 answer, at its top level or under `data`. */
function documentedTokenKey(operation: Operation): string | undefined {
  for (const status of ["200", "201"]) {
    const schema = operation.responses[status]?.schema as
      | { properties?: Record<string, { properties?: object }> }
      | undefined;
    const top = Object.keys(schema?.properties ?? {});
    const key = TOKEN_KEYS.find((name) => top.includes(name));
    if (key) return key;
    const nested = Object.keys(schema?.properties?.data?.properties ?? {});
    const inData = TOKEN_KEYS.find((name) => nested.includes(name));
    if (inData) return `data.${inData}`;
  }
  return undefined;
}

function sessionCookie(
  handler: HandlerText | undefined,
  repository: Repository,
  framework: FrameworkGuess | undefined,
): { name: string; because: string } {
  const named = handler
    ? /\.(?:cookie|set_cookie|setCookie)\(\s*["'`]([\w.-]+)["'`]|["'`]([\w.-]+)=\$\{/.exec(handler.text)
    : null;
  if (named) return { name: named[1] ?? named[2]!, because: `${handler!.file}` };
  const dependencies = new Set(repository.packageJson?.dependencies ?? []);
  for (const file of repository.codeFiles) {
    const text = repository.read(file);
    const configured =
      /session\(\s*\{[\s\S]{0,400}?\bname\s*:\s*["'`]([\w.-]+)["'`]/.exec(text) ??
      /SESSION_COOKIE_NAME\s*=\s*["']([\w.-]+)["']/.exec(text) ??
      /cookieName\s*:\s*["'`]([\w.-]+)["'`]/.exec(text);
    if (configured) return { name: configured[1]!, because: `${file}:${lineAt(text, configured.index)}` };
  }
  if (dependencies.has("express-session"))
    return { name: "connect.sid", because: "express-session's default" };
  if (dependencies.has("koa-session")) return { name: "koa.sess", because: "koa-session's default" };
  if (dependencies.has("@fastify/session"))
    return { name: "sessionId", because: "@fastify/session's default" };
  if (framework?.name === "django") return { name: "sessionid", because: "Django's default" };
  if (framework && ["flask", "connexion", "quart"].includes(framework.name))
    return { name: "session", because: "Flask's default" };
  return { name: "session", because: "a guess: check the cookie the sign-in sets" };
}

function whereDeclared(operation: Operation): string {
  if (operation.handler)
    return `${operation.handler.file}${operation.handler.line ? `:${operation.handler.line}` : ""}`;
  return operation.documented ? "the OpenAPI document" : (operation.seen_in[0] ?? "the inventory");
}

import ts from "typescript";
import { type BodyEncoding, BodyReader, type BodyShape } from "./body-schema.ts";
import { CallIndex } from "./call-index.ts";
import {
  calleeName,
  EMPTY_ENV,
  type Env,
  Evaluator,
  literalOf,
  type Part,
  skipOuter,
  type Value,
} from "./evaluate.ts";
import type { ScriptProgram } from "./script-program.ts";
import { urlTemplate } from "./url-template.ts";

// The requests a frontend's code sends, read from the code: `fetch`, axios (its verbs, its config call and
// instances from `axios.create({ baseURL })`), Angular's HttpClient, XMLHttpRequest and jQuery. A call made
// inside a wrapper (`api(path, body)`) is read once per caller, with that caller's arguments.

export type CallStyle = "fetch" | "axios" | "http-client" | "xhr" | "jquery";

export interface ApiCall {
  style: CallStyle;
  method: string;
  /** A `{param}` template relative to the server root. */
  path: string;
  query: Array<{ name: string; example?: string }>;
  body?: BodyShape;
  /** `file:line` of the call (or of the wrapper's caller). */
  where: string;
}

export interface FindOptions {
  /** The target's URL: relative URLs resolve against it and its host is the target's (default: unknown). */
  baseUrl?: string;
  /** Stop reading after this moment (epoch ms). */
  deadline?: number;
  /** Requests kept at most (default 2000). */
  maxCalls?: number;
}

/** A recognised request, still as expressions: evaluated once per wrapper caller. */
interface Sink {
  style: CallStyle;
  node: ts.CallExpression;
  /** A method literal, or the expression giving it; undefined: GET. */
  method?: string | ts.Expression;
  url: ts.Expression;
  /** An instance's `baseURL` (axios.create). */
  base?: ts.Expression;
  body?: ts.Expression;
  /** How the library encodes a plain object body. */
  plain: BodyEncoding;
  contentType?: ts.Expression;
  /** An object whose keys are query parameters (`params`, jQuery's `data` on a GET). */
  params?: ts.Expression;
}

const HTTP_METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]);
const VERBS_WITHOUT_BODY = new Set(["get", "delete", "head", "options", "jsonp"]);
const VERBS_WITH_BODY = new Set(["post", "put", "patch"]);
const JQUERY = /(?:^|\.)(?:\$|jQuery)$/;
/** Receivers that are HTTP clients by name: a wrapper's callers are followed only for these. */
const HTTP_RECEIVER = /http|api|axios|client|request|rest|service|backend|server|fetch|ajax/i;
const MAX_EXPANSION_DEPTH = 3;
const MAX_CALLERS = 40;

export function findApiCalls(program: ScriptProgram, options: FindOptions = {}): ApiCall[] {
  const evaluator = new Evaluator(program.checker);
  const calls = new CallIndex(program.files, program.checker);
  const bodies = new BodyReader(evaluator, calls);
  const found: ApiCall[] = [];
  const seen = new Set<string>();
  const maxCalls = options.maxCalls ?? 2000;
  const recognise = new SinkRecogniser(evaluator);

  for (const [name, list] of calls.all()) {
    if (!recognise.mayBeSink(name)) continue;
    for (const node of list) {
      if (found.length >= maxCalls || (options.deadline && Date.now() > options.deadline)) return found;
      const sink = recognise.sink(node);
      if (!sink) continue;
      const file = node.getSourceFile();
      const page = new URL(program.pageOf(file), options.baseUrl ?? "http://target.invalid");
      for (const call of expand(sink, EMPTY_ENV, 0)) {
        const key = `${call.method} ${call.path} ${call.body?.contentType ?? ""}`;
        if (seen.has(key)) continue;
        seen.add(key);
        found.push(call);
      }

      function expand(current: Sink, env: Env, depth: number, where?: ts.Node): ApiCall[] {
        evaluator.unbound = new Set();
        const call = resolve(current, env, where ?? current.node);
        const open = [...evaluator.unbound].filter((parameter) => !env.has(parameter));
        const expandable = current.style !== "http-client" || HTTP_RECEIVER.test(receiverText(current.node));
        if (open.length === 0 || depth >= MAX_EXPANSION_DEPTH || !expandable) return call ? [call] : [];
        const wrapper = open[0]!.parent as ts.SignatureDeclaration;
        const callers = calls.callersOf(wrapper).slice(0, MAX_CALLERS);
        if (callers.length === 0) return call ? [call] : [];
        return callers.flatMap((caller) => {
          const bound = new Map(env);
          wrapper.parameters.forEach((parameter, index) => {
            bound.set(parameter, parameter.dotDotDotToken ? undefined : caller.arguments[index]);
          });
          return expand(current, bound, depth + 1, caller);
        });
      }

      function resolve(current: Sink, env: Env, where: ts.Node): ApiCall | undefined {
        const method = methodOf(current.method, env);
        if (!method) return undefined;
        const url = evaluator.text(current.url, env);
        const parts = current.base ? joinBase(evaluator.text(current.base, env), url) : url;
        const template = urlTemplate(parts, page, current.style !== "http-client");
        if (!template) return undefined;
        const query = [...template.query];
        if (current.params) {
          const params = evaluator.evaluate(current.params, env);
          if (params.kind === "object") {
            const schema = bodies.schemaOf(params, env) as { properties?: Record<string, unknown> };
            for (const name of Object.keys(schema.properties ?? {}))
              if (!query.some((entry) => entry.name === name)) query.push({ name });
          }
        }
        const contentType = current.contentType
          ? literalOf(evaluator.evaluate(current.contentType, env))
          : undefined;
        const body =
          current.body && method !== "GET" && method !== "HEAD"
            ? bodies.read(current.body, env, current.plain, contentType)
            : undefined;
        const source = where.getSourceFile();
        const line = source.getLineAndCharacterOfPosition(where.getStart(source)).line + 1;
        return {
          style: current.style,
          method,
          path: template.path,
          query,
          ...(body ? { body } : {}),
          where: `${source.fileName}:${line}`,
        };
      }
    }
  }
  return found;

  function methodOf(method: Sink["method"], env: Env): string | undefined {
    if (method === undefined) return "GET";
    if (typeof method === "string") return method;
    const value = literalOf(evaluator.evaluate(method, env))?.toUpperCase();
    return value && HTTP_METHODS.has(value) ? value : undefined;
  }
}

/** Which calls send a request, and where their URL, method, body and parameters are. */
class SinkRecogniser {
  constructor(private readonly evaluator: Evaluator) {}

  mayBeSink(name: string): boolean {
    return (
      name === "fetch" ||
      name === "open" ||
      name === "request" ||
      name === "ajax" ||
      name === "axios" ||
      name === "getJSON" ||
      VERBS_WITHOUT_BODY.has(name) ||
      VERBS_WITH_BODY.has(name)
    );
  }

  sink(node: ts.CallExpression): Sink | undefined {
    const callee = skipOuter(node.expression);
    const name = calleeName(callee);
    const receiver = ts.isPropertyAccessExpression(callee) ? skipOuter(callee.expression) : undefined;
    const [first, second, third] = node.arguments;
    if (!first) return undefined;
    if (name === "fetch" && (!receiver || /^(?:window|self|globalThis|this)$/.test(receiver.getText())))
      return this.fetch(node, first, second);
    if (name === "open" && receiver && second) return this.xhr(node, receiver, first, second);
    const jquery = receiver !== undefined && JQUERY.test(receiver.getText());
    if (name === "ajax" || name === "getJSON" || (jquery && (name === "get" || name === "post")))
      return this.jquery(node, name, first, second);
    // axios(config), axios.request(config), instance.request(config), $http(config)
    if (!ts.isStringLiteralLike(skipOuter(first))) {
      const config = this.objectOf(first);
      if (
        config &&
        this.property(config, "url") &&
        (name === "axios" || name === "request" || this.property(config, "method"))
      )
        return this.config(node, config, receiver);
    }
    if (name === "request" && second) {
      // Angular: http.request(method, url, { body, params })
      const options = third ? this.objectOf(third) : undefined;
      return {
        style: "http-client",
        node,
        method: first,
        url: second,
        body: options ? this.property(options, "body") : undefined,
        params: options ? this.property(options, "params") : undefined,
        plain: "json",
      };
    }
    if (!receiver || jquery || !(VERBS_WITHOUT_BODY.has(name) || VERBS_WITH_BODY.has(name))) return undefined;
    // `map.get(key)` and `params.delete("q")` share the names: the URL must look like one, or the receiver
    // must be an HTTP client by name (a wrapper whose callers give the path).
    if (!this.mayBeUrl(first) && !HTTP_RECEIVER.test(receiver.getText())) return undefined;
    const base = this.instanceBase(receiver);
    const style: CallStyle = base || /axios/i.test(receiver.getText()) ? "axios" : "http-client";
    if (VERBS_WITHOUT_BODY.has(name)) {
      const options = second ? this.objectOf(second) : undefined;
      return {
        style,
        node,
        method: name.toUpperCase(),
        url: first,
        base,
        params: options ? this.property(options, "params") : undefined,
        plain: "json",
      };
    }
    if (VERBS_WITH_BODY.has(name)) {
      const options = third ? this.objectOf(third) : undefined;
      return {
        style,
        node,
        method: name.toUpperCase(),
        url: first,
        base,
        body: second,
        params: options ? this.property(options, "params") : undefined,
        plain: "json",
      };
    }
    return undefined;
  }

  private fetch(node: ts.CallExpression, url: ts.Expression, init: ts.Expression | undefined): Sink {
    const options = init ? this.objectOf(init) : undefined;
    const headers = options ? this.objectOf(this.property(options, "headers")) : undefined;
    return {
      style: "fetch",
      node,
      method: options ? this.property(options, "method") : undefined,
      url,
      body: options ? this.property(options, "body") : undefined,
      plain: "json",
      contentType: headers ? this.headerNamed(headers, "content-type") : undefined,
    };
  }

  /** `xhr.open(method, url)`, its body from the `xhr.send(body)` that follows in the same function. */
  private xhr(
    node: ts.CallExpression,
    receiver: ts.Expression,
    method: ts.Expression,
    url: ts.Expression,
  ): Sink | undefined {
    const literal = literalOf(this.evaluator.evaluate(method, EMPTY_ENV))?.toUpperCase();
    if (!(literal && HTTP_METHODS.has(literal)) && !this.isXmlHttpRequest(receiver)) return undefined;
    const text = receiver.getText();
    let body: ts.Expression | undefined;
    let contentType: ts.Expression | undefined;
    const scope = enclosingFunction(node) ?? node.getSourceFile();
    const visit = (child: ts.Node): void => {
      if (
        ts.isCallExpression(child) &&
        child.pos > node.end &&
        ts.isPropertyAccessExpression(child.expression)
      ) {
        const target = child.expression.expression.getText();
        const called = child.expression.name.text;
        if (target === text && called === "send" && !body) body = child.arguments[0];
        if (target === text && called === "setRequestHeader") {
          const [header, value] = child.arguments;
          if (
            header &&
            value &&
            literalOf(this.evaluator.evaluate(header, EMPTY_ENV))?.toLowerCase() === "content-type"
          )
            contentType = value;
        }
      }
      ts.forEachChild(child, visit);
    };
    visit(scope);
    return { style: "xhr", node, method, url, body, plain: "text", contentType };
  }

  private jquery(
    node: ts.CallExpression,
    name: string,
    first: ts.Expression,
    second: ts.Expression | undefined,
  ): Sink | undefined {
    // $.ajax(settings), $.ajax(url, settings), $.get(settings); otherwise the second argument is data.
    const settings = this.objectOf(first) ?? (name === "ajax" && second ? this.objectOf(second) : undefined);
    const url = this.objectOf(first) ? (settings ? this.property(settings, "url") : undefined) : first;
    if (!url) return undefined;
    if (name === "ajax" || settings) {
      const method = settings
        ? (this.property(settings, "method") ?? this.property(settings, "type"))
        : undefined;
      const data = settings ? this.property(settings, "data") : undefined;
      const contentType = settings ? this.property(settings, "contentType") : undefined;
      const fixed = name === "post" ? "POST" : undefined;
      const methodText = fixed ?? (method ? literalOf(this.evaluator.evaluate(method, EMPTY_ENV)) : "GET");
      const isGet = (methodText ?? "GET").toUpperCase() === "GET";
      return {
        style: "jquery",
        node,
        method: fixed ?? method,
        url,
        body: isGet ? undefined : data,
        params: isGet ? data : undefined,
        plain: "form",
        contentType,
      };
    }
    // $.get(url, data), $.getJSON(url, data), $.post(url, data)
    return {
      style: "jquery",
      node,
      method: name === "post" ? "POST" : "GET",
      url,
      body: name === "post" ? second : undefined,
      params: name === "post" ? undefined : second,
      plain: "form",
    };
  }

  private config(
    node: ts.CallExpression,
    config: ts.ObjectLiteralExpression,
    receiver: ts.Expression | undefined,
  ): Sink {
    const url = this.property(config, "url")!;
    const headers = this.objectOf(this.property(config, "headers"));
    return {
      style: "axios",
      node,
      method: this.property(config, "method"),
      url,
      base: this.property(config, "baseURL") ?? (receiver ? this.instanceBase(receiver) : undefined),
      body: this.property(config, "data") ?? this.property(config, "body"),
      params: this.property(config, "params"),
      plain: "json",
      contentType: headers ? this.headerNamed(headers, "content-type") : undefined,
    };
  }

  /** Whether an argument could be a URL: some literal part of it holds a slash. */
  private mayBeUrl(argument: ts.Expression): boolean {
    const inner = skipOuter(argument);
    if (ts.isStringLiteralLike(inner)) return inner.text.includes("/");
    const value = this.evaluator.evaluate(inner, EMPTY_ENV);
    return (
      value.kind === "text" && value.parts.some((part) => "literal" in part && part.literal.includes("/"))
    );
  }

  /** An axios instance's `baseURL`: the receiver holds `X.create({ baseURL })`. */
  private instanceBase(receiver: ts.Expression): ts.Expression | undefined {
    const value = this.evaluator.evaluate(receiver, EMPTY_ENV);
    if (value.kind !== "call" || value.name !== "create") return undefined;
    const options = this.objectOf(value.node.arguments[0]);
    return options ? this.property(options, "baseURL") : undefined;
  }

  private isXmlHttpRequest(receiver: ts.Expression): boolean {
    const value: Value = this.evaluator.evaluate(receiver, EMPTY_ENV);
    return value.kind === "new" && /XMLHttpRequest/.test(value.constructor);
  }

  private objectOf(expression: ts.Expression | undefined): ts.ObjectLiteralExpression | undefined {
    if (!expression) return undefined;
    const inner = skipOuter(expression);
    if (ts.isObjectLiteralExpression(inner)) return inner;
    const value = this.evaluator.evaluate(inner, EMPTY_ENV);
    return value.kind === "object" ? value.node : undefined;
  }

  private property(object: ts.ObjectLiteralExpression, name: string): ts.Expression | undefined {
    return this.evaluator.propertyExpression(object, name, EMPTY_ENV);
  }

  private headerNamed(headers: ts.ObjectLiteralExpression, name: string): ts.Expression | undefined {
    for (const property of headers.properties) {
      if (!ts.isPropertyAssignment(property)) continue;
      const key =
        ts.isIdentifier(property.name) || ts.isStringLiteralLike(property.name) ? property.name.text : "";
      if (key.toLowerCase() === name) return property.initializer;
    }
    return undefined;
  }
}

/** A client's base URL joined to a request path the way axios does: one slash between, none if absolute. */
function joinBase(base: Part[], url: Part[]): Part[] {
  const first = url[0];
  if (first && "literal" in first && /^(?:[a-z]+:)?\/\//i.test(first.literal)) return url;
  const last = base.at(-1);
  const head =
    last && "literal" in last ? [...base.slice(0, -1), { literal: last.literal.replace(/\/+$/, "") }] : base;
  const tail =
    first && "literal" in first ? [{ literal: first.literal.replace(/^\/+/, "") }, ...url.slice(1)] : url;
  return [...head, { literal: "/" }, ...tail];
}

function receiverText(node: ts.CallExpression): string {
  const callee = skipOuter(node.expression);
  return ts.isPropertyAccessExpression(callee) ? callee.expression.getText() : "";
}

function enclosingFunction(node: ts.Node): ts.Node | undefined {
  let current: ts.Node | undefined = node.parent;
  while (current && !ts.isFunctionLike(current)) current = current.parent;
  return current;
}

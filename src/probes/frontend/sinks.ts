import ts from "typescript";
import type { BodyEncoding } from "./body-schema.ts";
import { calleeName, EMPTY_ENV, type Evaluator, literalOf, skipOuter, type Value } from "./evaluate.ts";

// Which calls send a request, and where in them the URL, method, body and parameters are: `fetch`,
// XMLHttpRequest's `open` (with the `send` that follows), jQuery, axios's config call and its verbs (also
// Angular HttpClient's), `request(method, url, options)`. Only expressions here: findApiCalls evaluates
// them, once per wrapper caller.

export type CallStyle = "fetch" | "axios" | "http-client" | "xhr" | "jquery";

/** A recognised request, still as expressions: evaluated once per wrapper caller. */
export interface Sink {
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

export const HTTP_METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]);
const VERBS_WITHOUT_BODY = new Set(["get", "delete", "head", "options", "jsonp"]);
const VERBS_WITH_BODY = new Set(["post", "put", "patch"]);
const JQUERY = /(?:^|\.)(?:\$|jQuery)$/;
/** Receivers that are HTTP clients by name: a wrapper's callers are followed only for these. */
export const HTTP_RECEIVER = /http|api|axios|client|request|rest|service|backend|server|fetch|ajax/i;

/** Which calls send a request, and where their URL, method, body and parameters are. */
export class SinkRecogniser {
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
function enclosingFunction(node: ts.Node): ts.Node | undefined {
  let current: ts.Node | undefined = node.parent;
  while (current && !ts.isFunctionLike(current)) current = current.parent;
  return current;
}

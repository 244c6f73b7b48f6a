import ts from "typescript";
import { BodyReader, type BodyShape } from "./body-schema.ts";
import { CallIndex } from "./call-index.ts";
import { EMPTY_ENV, type Env, Evaluator, literalOf, type Part, skipOuter } from "./evaluate.ts";
import type { ScriptProgram } from "./script-program.ts";
import { type CallStyle, HTTP_METHODS, HTTP_RECEIVER, type Sink, SinkRecogniser } from "./sinks.ts";
import { urlTemplate } from "./url-template.ts";

export type { CallStyle } from "./sinks.ts";

// The requests a frontend's code sends, read from the code: `fetch`, axios (its verbs, its config call and
// instances from `axios.create({ baseURL })`), Angular's HttpClient, XMLHttpRequest and jQuery. A call made
// inside a wrapper (`api(path, body)`) is read once per caller, with that caller's arguments.

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

const MAX_EXPANSION_DEPTH = 3;
const MAX_CALLERS = 40;

export function findApiCalls(program: ScriptProgram, options: FindOptions = {}): ApiCall[] {
  return new CallReader(program, options).read();
}

/** One reading of a program: the evaluator, the call index and the body reader are shared by every sink. */
class CallReader {
  private readonly evaluator: Evaluator;
  private readonly calls: CallIndex;
  private readonly bodies: BodyReader;
  private readonly recognise: SinkRecogniser;

  constructor(
    private readonly program: ScriptProgram,
    private readonly options: FindOptions,
  ) {
    this.evaluator = new Evaluator(program.checker);
    this.calls = new CallIndex(program.files, program.checker);
    this.bodies = new BodyReader(this.evaluator, this.calls);
    this.recognise = new SinkRecogniser(this.evaluator);
  }

  read(): ApiCall[] {
    const found: ApiCall[] = [];
    const seen = new Set<string>();
    const maxCalls = this.options.maxCalls ?? 2000;
    for (const [name, list] of this.calls.all()) {
      if (!this.recognise.mayBeSink(name)) continue;
      for (const node of list) {
        if (found.length >= maxCalls || (this.options.deadline && Date.now() > this.options.deadline))
          return found;
        const sink = this.recognise.sink(node);
        if (!sink) continue;
        const page = new URL(
          this.program.pageOf(node.getSourceFile()),
          this.options.baseUrl ?? "http://target.invalid",
        );
        for (const call of this.expand(sink, page, EMPTY_ENV, 0, node)) {
          const key = `${call.method} ${call.path} ${call.body?.contentType ?? ""}`;
          if (seen.has(key)) continue;
          seen.add(key);
          found.push(call);
        }
      }
    }
    return found;
  }

  /**
   * The sink's requests: itself when everything it sends is known, else once per caller of the wrapper
   * whose parameter it depends on, with that caller's arguments bound (callers' callers too, a few deep).
   */
  private expand(sink: Sink, page: URL, env: Env, depth: number, where: ts.Node): ApiCall[] {
    this.evaluator.unbound = new Set();
    const call = this.resolve(sink, page, env, where);
    const open = [...this.evaluator.unbound].filter((parameter) => !env.has(parameter));
    const expandable = sink.style !== "http-client" || HTTP_RECEIVER.test(receiverText(sink.node));
    if (open.length === 0 || depth >= MAX_EXPANSION_DEPTH || !expandable) return call ? [call] : [];
    const wrapper = open[0]!.parent as ts.SignatureDeclaration;
    const callers = this.calls.callersOf(wrapper).slice(0, MAX_CALLERS);
    if (callers.length === 0) return call ? [call] : [];
    return callers.flatMap((caller) => {
      const bound = new Map(env);
      wrapper.parameters.forEach((parameter, index) => {
        bound.set(parameter, parameter.dotDotDotToken ? undefined : caller.arguments[index]);
      });
      return this.expand(sink, page, bound, depth + 1, caller);
    });
  }

  private resolve(sink: Sink, page: URL, env: Env, where: ts.Node): ApiCall | undefined {
    const method = this.methodOf(sink.method, env);
    if (!method) return undefined;
    const url = this.evaluator.text(sink.url, env);
    const parts = sink.base ? joinBase(this.evaluator.text(sink.base, env), url) : url;
    const template = urlTemplate(parts, page, sink.style !== "http-client");
    if (!template) return undefined;
    const query = [...template.query];
    if (sink.params) {
      const params = this.evaluator.evaluate(sink.params, env);
      if (params.kind === "object") {
        const schema = this.bodies.schemaOf(params, env) as { properties?: Record<string, unknown> };
        for (const name of Object.keys(schema.properties ?? {}))
          if (!query.some((entry) => entry.name === name)) query.push({ name });
      }
    }
    const contentType = sink.contentType
      ? literalOf(this.evaluator.evaluate(sink.contentType, env))
      : undefined;
    const body =
      sink.body && method !== "GET" && method !== "HEAD"
        ? this.bodies.read(sink.body, env, sink.plain, contentType)
        : undefined;
    const source = where.getSourceFile();
    const line = source.getLineAndCharacterOfPosition(where.getStart(source)).line + 1;
    return {
      style: sink.style,
      method,
      path: template.path,
      query,
      ...(body ? { body } : {}),
      where: `${source.fileName}:${line}`,
    };
  }

  private methodOf(method: Sink["method"], env: Env): string | undefined {
    if (method === undefined) return "GET";
    if (typeof method === "string") return method;
    const value = literalOf(this.evaluator.evaluate(method, env))?.toUpperCase();
    return value && HTTP_METHODS.has(value) ? value : undefined;
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

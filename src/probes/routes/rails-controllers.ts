import type { Route } from "../../map/system-map.ts";
import { pathParameterNames } from "../http/target-url.ts";
import { withInputs } from "./container-graph.ts";
import type { RouteInputs } from "./route-inputs.ts";
import { RUBY_SYNTAX, rubyHandlerInputs } from "./ruby-inputs.ts";
import { MaskedSource } from "./source-text.ts";
import { readSource } from "./source-tree.ts";

// What a Rails route's controller action reads: `app/controllers/<module>/<name>_controller.rb`, the
// action's `def` and the private methods it calls that read `params` (`article_params` with its
// `params.require(:article).permit(:title, :body)`). A controller of an API (`ActionController::API`, or one
// that only renders JSON) takes a JSON body; any other takes the form a browser sends, fields named
// `article[title]` as Rails' own form helpers name them.

export interface ControllerAction {
  /** `articles`, `api/v1/tokens`. */
  controller: string;
  action: string;
}

interface ControllerFile {
  text: string;
  api: boolean;
}

export class ControllerSources {
  private readonly files = new Map<string, ControllerFile | undefined>();

  constructor(
    private readonly root: string,
    /** The Rails application's folder within the tree (`""` at the root). */
    private readonly app: string,
  ) {}

  inputsOf(route: Route, target: ControllerAction): RouteInputs {
    const file = this.file(target.controller);
    const block = file && actionBlock(file.text, target.action);
    if (!file || block === undefined) return {};
    const inputs = rubyHandlerInputs(route.method, block, pathParameterNames(route.path), new Set(), {
      rails: file.api ? "json" : "form",
    });
    return withInputs(route.method, inputs);
  }

  private file(controller: string): ControllerFile | undefined {
    if (this.files.has(controller)) return this.files.get(controller);
    const text = this.read(`app/controllers/${controller}_controller.rb`);
    const parent = text && /^\s*class\s+[\w:]+\s*<\s*([\w:]+)/m.exec(text)?.[1];
    const parentText =
      parent && parent !== "ActionController::API" && parent !== "ActionController::Base"
        ? this.read(`app/controllers/${underscore(parent)}.rb`)
        : undefined;
    const file = text
      ? {
          text,
          api:
            /ActionController::API\b/.test(`${text}\n${parentText ?? ""}`) ||
            (/\brender\s*\(?\s*json:/.test(text) && !/\bformat\.html\b|\bredirect_to\b/.test(text)),
        }
      : undefined;
    this.files.set(controller, file);
    return file;
  }

  private read(path: string): string | undefined {
    const source = readSource(this.root, this.app ? `${this.app}/${path}` : path);
    return source === undefined ? undefined : new MaskedSource(source, RUBY_SYNTAX).text;
  }
}

/** `Api::BaseController` → `api/base_controller`. */
function underscore(constant: string): string {
  return constant
    .split("::")
    .map((part) => part.replace(/([a-z\d])([A-Z])/g, "$1_$2").toLowerCase())
    .join("/");
}

/** The action's body, with the bodies of the file's methods it calls that read `params`. */
function actionBlock(text: string, action: string): string | undefined {
  const own = methodBody(text, action);
  if (own === undefined) return undefined;
  const helpers = [...text.matchAll(/^\s*def\s+(\w+[?!]?)/gm)]
    .map((match) => match[1] ?? "")
    .filter(
      (name) =>
        name !== action && new RegExp(`(?<![\\w.])${name.replace(/[?!]/g, "\\$&")}(?![\\w?!:])`).test(own),
    )
    .map((name) => methodBody(text, name) ?? "")
    .filter((body) => /\bparams\b/.test(body));
  return [own, ...helpers].join("\n");
}

/** The lines of `def name` up to the `end` at its own indentation. */
function methodBody(text: string, name: string): string | undefined {
  const start = new RegExp(`^([ \\t]*)def\\s+${name.replace(/[?!]/g, "\\$&")}(?![\\w?!])[^\\n]*$`, "m").exec(
    text,
  );
  if (!start) return undefined;
  const rest = text.slice((start.index ?? 0) + start[0].length);
  const end = new RegExp(`^${start[1]}end\\b`, "m").exec(rest);
  return end ? rest.slice(0, end.index) : rest;
}

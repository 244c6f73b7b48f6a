import { randomInt } from "node:crypto";
import type { Page } from "playwright-core";
import { boundedCall, EVALUATE_MS } from "./bounded-call.ts";
import type { NetworkEntry } from "./browser-session.ts";

// Before a page is loaded with the three XSS payloads, it is loaded once with an inert word in the same
// input: only an input the page's script (or the server) puts somewhere can carry a payload anywhere. The
// word counts as having reached a sink when it is handed to a code sink (a timer's string, eval, Function),
// to an HTML sink whether or not the element is in the document (innerHTML, insertAdjacentHTML, a contextual
// fragment, document.write), to an attribute or text node that is written (even one removed a moment
// later), to window.open, or to any request after the page's own (a `location` assignment, a fetch); or when
// the rendered document holds it. Most pages never read their URL: each then costs one load, not three.

/** Lowercase, so a script that changes the case of what it writes still shows it. */
const PREFIX = "qaascanary";
const SINKS = "__qaasCanarySinks";

/** A fresh inert word: letters and digits, which no encoding the page may apply changes. */
export function canaryWord(): string {
  return `${PREFIX}${randomInt(100_000, 999_999)}`;
}

/**
 * The watcher every probed tab carries from the start of each document: it acts only in a document whose URL
 * holds a canary word, so payload loads run the page untouched. Each wrapper hands the call on as it came.
 */
export function watchCanarySinks({ prefix, sinks }: { prefix: string; sinks: string }): void {
  const at = location.href.toLowerCase().indexOf(prefix);
  if (at < 0) return;
  const word = location.href.slice(at, at + prefix.length + 6).toLowerCase();
  const hits: string[] = [];
  Object.defineProperty(window, sinks, { value: hits, writable: false });
  const seen = (sink: string, value: unknown): void => {
    if (hits.length < 20 && typeof value === "string" && value.toLowerCase().includes(word)) hits.push(sink);
  };
  const scope = window as unknown as Record<string, unknown>;
  const wrapCall = (owner: Record<string, unknown>, name: string, argument: number | "all"): void => {
    const original = owner[name];
    if (typeof original !== "function") return;
    owner[name] = function (this: unknown, ...args: unknown[]) {
      seen(name, argument === "all" ? args.join("") : args[argument]);
      return original.apply(this, args);
    };
  };
  for (const name of ["setTimeout", "setInterval", "eval", "open"]) wrapCall(scope, name, 0);
  const OriginalFunction = Function;
  scope.Function = new Proxy(OriginalFunction, {
    apply: (target, self, args) => {
      seen("Function", args.join(" "));
      return Reflect.apply(target, self, args);
    },
    construct: (target, args, newTarget) => {
      seen("Function", args.join(" "));
      return Reflect.construct(target, args, newTarget);
    },
  });
  const wrapSetter = (prototype: object, name: string): void => {
    const descriptor = Object.getOwnPropertyDescriptor(prototype, name);
    if (!descriptor?.set) return;
    const set = descriptor.set;
    Object.defineProperty(prototype, name, {
      ...descriptor,
      set(this: unknown, value: unknown) {
        seen(name, value);
        set.call(this, value);
      },
    });
  };
  wrapSetter(Element.prototype, "innerHTML");
  wrapSetter(Element.prototype, "outerHTML");
  wrapSetter(ShadowRoot.prototype, "innerHTML");
  const prototypes = Element.prototype as unknown as Record<string, unknown>;
  wrapCall(prototypes, "insertAdjacentHTML", 1);
  wrapCall(prototypes, "setAttribute", 1);
  wrapCall(prototypes, "setHTMLUnsafe", 0);
  wrapCall(Range.prototype as unknown as Record<string, unknown>, "createContextualFragment", 0);
  wrapCall(Document.prototype as unknown as Record<string, unknown>, "write", "all");
  wrapCall(Document.prototype as unknown as Record<string, unknown>, "writeln", "all");
  new MutationObserver((records) => {
    for (const record of records) {
      if (record.type === "attributes" && record.attributeName)
        seen("attribute", (record.target as Element).getAttribute(record.attributeName));
      else if (record.type === "characterData") seen("text", record.target.textContent);
      for (const node of record.addedNodes)
        seen("node", node.nodeType === 1 ? (node as Element).outerHTML : node.textContent);
    }
  }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
}

export const CANARY_WATCH = { prefix: PREFIX, sinks: SINKS };

/**
 * Where the canary word went, read once the page settled: the sinks the watcher saw, the document (every
 * frame, open shadow roots too), and the requests after the page's own. Empty: the input reaches nothing.
 */
export async function canarySinks(
  page: Page,
  word: string,
  loaded: string,
  network: readonly NetworkEntry[],
): Promise<string[]> {
  const reached = new Set<string>();
  const withoutFragment = (url: string) => url.split("#")[0];
  for (const entry of network)
    if (withoutFragment(entry.url) !== withoutFragment(loaded) && entry.url.toLowerCase().includes(word))
      reached.add(`request ${entry.method} ${entry.resourceType}`);
  for (const frame of page.frames()) {
    const found = await boundedCall(
      frame.evaluate(
        ({ word, sinks }) => {
          const hits = [...((window as unknown as Record<string, string[]>)[sinks] ?? [])];
          const documents: Array<Document | ShadowRoot> = [document];
          for (const element of document.querySelectorAll("*"))
            if (element.shadowRoot) documents.push(element.shadowRoot);
          const markup = (root: Document | ShadowRoot) =>
            root instanceof Document ? root.documentElement?.outerHTML : root.innerHTML;
          if (documents.some((root) => (markup(root) ?? "").toLowerCase().includes(word)))
            hits.push("document");
          return hits;
        },
        { word, sinks: SINKS },
      ),
      EVALUATE_MS,
      [] as string[],
    );
    for (const sink of found) reached.add(sink);
  }
  return [...reached];
}

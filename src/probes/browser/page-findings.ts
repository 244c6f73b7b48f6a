import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { ToolContext } from "../../tools/context.ts";
import type { Masker } from "../http/masking.ts";
import type { ConfirmedPage } from "./page-checks.ts";
import { uiFinding } from "./ui-finding.ts";

// Confirmed page results → envelope drafts, one per page template and signature (console error), control
// (dead control), request (background failure) or asset; accessibility waits for every page
// (accessibility-findings.ts), layout faults have their own (layout-findings.ts). Severity follows what a
// person loses: an exception or a failing request breaks a journey, a missing image mostly does not.

export interface PageScope {
  context: ToolContext;
  masker: Masker;
  baseUrl: string;
  role: string;
  /** The concrete page opened (`/projects/12`) and its template (`/projects/{id}`). */
  path: string;
  template: string;
  /** Draft keys already answered this call: one finding per place and discriminator. */
  seen: Set<string>;
}

export function pageDrafts(scope: PageScope, page: ConfirmedPage): EnvelopeDraft[] {
  const drafts: EnvelopeDraft[] = [];
  const { role, path, template } = scope;
  const open = `open ${path} as ${role} in a browser at desktop width and wait for the network to settle`;
  const add = (key: string, build: () => EnvelopeDraft): void => {
    if (scope.seen.has(key)) return;
    scope.seen.add(key);
    drafts.push(build());
  };
  const common = {
    role,
    baseUrl: scope.baseUrl,
    location: template,
    ...(page.screenshot ? { screenshot: page.screenshot } : {}),
  };

  for (const { first, second } of page.consoleErrors) {
    add(`console-error|${template}|${first.signature}`, () =>
      uiFinding(scope.context, scope.masker, {
        ...common,
        defectClass: "console-error",
        title: `${first.kind === "exception" ? "Uncaught exception" : "Console error"} on ${template}: ${first.text.split("\n")[0]?.slice(0, 120)}`,
        summary: `Loading ${path} as ${role} ${first.kind === "exception" ? "throws an exception nothing catches" : "logs an error to the console"}, on two fresh loads: "${first.text.split("\n")[0]}"${first.location ? ` (at ${first.location})` : ""}.`,
        impact:
          first.kind === "exception"
            ? "The script stops where it threw: whatever it was going to render or wire up on this page is missing."
            : "The page reports a failure of its own; what it was doing may be incomplete for the person using it.",
        severity: first.kind === "exception" ? "medium" : "low",
        confidence: 0.8,
        discriminator: first.signature,
        steps: [open, "open the developer console", `see: ${first.text.split("\n")[0]}`],
        observed: { page: path, role, first, second },
        notes: [`console excerpt (second load): ${second.text.split("\n")[0]}`],
        assertion: { kind: "console-error", page: path, signature: first.signature },
      }),
    );
  }

  for (const { first, second } of page.backgroundErrors) {
    const target = new URL(first.url).pathname;
    add(`broken-journey|${template}|background ${first.method} ${target}`, () =>
      uiFinding(scope.context, scope.masker, {
        ...common,
        defectClass: "broken-journey",
        title: `${template} loads with a failing request: ${first.method} ${target} answers ${first.status}`,
        summary: `When ${path} loads as ${role}, its own ${first.resourceType} request ${first.method} ${target} answers ${first.status}; a fresh load answers ${second.status} again.`,
        impact: "Whatever the page fetches there never arrives: the person sees an incomplete or empty page.",
        severity: "medium",
        confidence: 0.85,
        discriminator: `background ${first.method} ${target}`,
        steps: [open, `watch the network: ${first.method} ${target} answers ${first.status}`],
        observed: { page: path, role, first, second },
        notes: [
          `network: ${first.method} ${first.url} → ${first.status}, then ${second.status} on a fresh load`,
        ],
        assertion: { kind: "background-error", page: path, method: first.method, path: target },
      }),
    );
  }

  for (const { asset, recheck } of page.assets) {
    const assetPath = new URL(asset.url).pathname;
    add(`broken-link|${assetPath}|asset`, () =>
      uiFinding(scope.context, scope.masker, {
        ...common,
        location: assetPath,
        defectClass: "broken-link",
        title: `Broken ${asset.resourceType} ${assetPath} on ${template} (${recheck})`,
        summary: `${path} loads the ${asset.resourceType} ${assetPath}, which ${asset.status !== undefined ? `answers ${asset.status}` : asset.failure ? `fails (${asset.failure})` : "renders nothing"}; requested again it answers ${recheck}.`,
        impact:
          asset.resourceType === "image"
            ? "The page shows a broken image."
            : `The page runs without its ${asset.resourceType}: behaviour or styling that depends on it is missing.`,
        severity: asset.resourceType === "image" ? "low" : "medium",
        confidence: 0.85,
        discriminator: "asset",
        steps: [open, `request ${assetPath}: it answers ${recheck}`],
        observed: { page: path, role, asset, recheck },
        notes: [`referenced by ${template}`],
        assertion: { kind: "asset", page: path, asset: assetPath },
      }),
    );
  }

  for (const { control, first, second } of page.deadControls) {
    const name = control.name || control.selector;
    add(`broken-journey|${template}|control ${control.name} ${control.selector}`, () =>
      uiFinding(scope.context, scope.masker, {
        ...common,
        defectClass: "broken-journey",
        title: `${template}: the control "${name}" does nothing when clicked`,
        summary: `Clicking "${name}" (${control.tag}, ${control.selector}) on ${path} as ${role} causes no request, no navigation, no DOM change, no dialog, download or popup within a second, on two fresh loads.${first.exceptions.length > 0 ? ` The click raises: ${first.exceptions[0]}` : ""}`,
        impact: "A person who clicks it gets no answer: the journey it starts cannot be completed.",
        severity: "medium",
        confidence: first.exceptions.length > 0 ? 0.8 : 0.7,
        discriminator: `control ${control.name} ${control.selector}`,
        steps: [open, `click "${name}" (${control.selector})`, "nothing happens"],
        observed: { page: path, role, control, first, second },
        notes: first.exceptions.length > 0 ? [`exception on click: ${first.exceptions[0]}`] : [],
        assertion: { kind: "dead-control", page: path, selector: control.selector, name },
      }),
    );
  }
  return drafts;
}

import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { operationKey } from "../api/operation-index.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { answerShows } from "./answer-text.ts";
import { type PointFinding, pointFinding, where } from "./injection-finding.ts";
import { arithmetic } from "./markers.ts";
import type { OpenPoint, Sent } from "./point-sender.ts";
import { sendAt } from "./point-sender.ts";
import type { PointProbeOptions } from "./probe-frame.ts";
import { probePoints } from "./probe-frame.ts";

// Server-side template injection: a multiplication in the expression syntax of each template family
// (Jinja/Twig/Nunjucks/Handlebars-like `{{ }}`, JSP/Freemarker/JS template literal `${ }`, ERB/EJS `<%= %>`,
// Ruby/Pug/Thymeleaf `#{ }`, doT `{{= }}`, Smarty `{ }`, Razor `@( )`). Reported when the product appears
// and the expression as sent does not (the engine evaluated it), confirmed by a second, different product.

const SYNTAXES: ReadonlyArray<{ name: string; wrap(expression: string): string }> = [
  { name: "{{ }}", wrap: (expression) => `{{${expression}}}` },
  { name: "${ }", wrap: (expression) => `\${${expression}}` },
  { name: "<%= %>", wrap: (expression) => `<%= ${expression} %>` },
  { name: "#{ }", wrap: (expression) => `#{${expression}}` },
  { name: "{{= }}", wrap: (expression) => `{{=${expression}}}` },
  { name: "{ }", wrap: (expression) => `{${expression}}` },
  { name: "@( )", wrap: (expression) => `@(${expression})` },
  { name: "*{ }", wrap: (expression) => `*{${expression}}` },
];

interface Hit {
  open: OpenPoint;
  syntax: string;
  evidence: Array<{ label: string; sent: Sent }>;
  products: [string, string];
  expressions: [string, string];
}

export async function probeTemplateInjection(
  run: ProbeRun,
  options: PointProbeOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const { hits, stats } = await probePoints(run, options, {
    select: (point) => !point.numeric,
    test: (open) => testPoint(run, open),
  });
  const candidates = hits.map((hit) => pointFinding(run, findingOf(hit)));
  return { candidates, stats: { ...stats, confirmed: candidates.length } };
}

async function attempt(
  run: ProbeRun,
  open: OpenPoint,
  wrap: (expression: string) => string,
): Promise<{ sent: Sent; product: string; expression: string } | undefined> {
  const numbers = arithmetic();
  const expression = wrap(`${numbers.left}*${numbers.right}`);
  const sent = await sendAt(run, open, `${open.value}${expression}`);
  if (!sent) return undefined;
  const evaluated =
    answerShows(sent.exchange, numbers.product) &&
    !answerShows(sent.exchange, expression) &&
    !answerShows(open.exchange, numbers.product);
  return evaluated ? { sent, product: numbers.product, expression } : undefined;
}

async function testPoint(run: ProbeRun, open: OpenPoint): Promise<Hit | undefined> {
  for (const syntax of SYNTAXES) {
    const first = await attempt(run, open, syntax.wrap);
    if (!first) continue;
    const second = await attempt(run, open, syntax.wrap);
    if (!second) continue;
    return {
      open,
      syntax: syntax.name,
      evidence: [
        { label: "template-product", sent: first.sent },
        { label: "template-product-again", sent: second.sent },
      ],
      products: [first.product, second.product],
      expressions: [first.expression, second.expression],
    };
  }
  return undefined;
}

function findingOf(hit: Hit): PointFinding {
  const key = operationKey(hit.open.point.operation);
  return {
    open: hit.open,
    defectClass: "injection",
    family: "template",
    title: `Server-side template injection in ${where(hit.open)} of ${key} (${hit.syntax})`,
    summary: `${key}: the template expression ${hit.expressions[0]} sent in ${where(hit.open)} came back evaluated as ${hit.products[0]} (and ${hit.expressions[1]} as ${hit.products[1]}), without the expression itself: the input is compiled as template source.`,
    impact:
      "Template expressions reach the server's objects: an attacker reads its configuration and secrets and, in most engines, runs code on the server.",
    evidence: hit.evidence,
    assertions: [
      {
        kind: "answer_lacks",
        step: "template-product",
        text: hit.products[0],
        message: "input must be a template variable, never template source (the expression was evaluated)",
      },
    ],
  };
}

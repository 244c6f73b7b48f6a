import type { ToolContext } from "../../tools/context.ts";
import { isTestPath } from "../architecture/code-files.ts";
import { searchCode } from "../architecture/code-search.ts";
import { isParameterSegment, pathOnly } from "./path-templates.ts";

// The walk never submits a form, so it cannot see where a submission lands (`POST /signup` → 303
// `/welcome`). When the target's source is at hand, a redirect or navigation in it that names the page is
// taken as the way people reach it: such a page is not undiscoverable, only reached after an action.

const REDIRECTING =
  "(?:redirect|location|navigate|(?:router|history)\\.(?:push|replace)\\(|url_for|reverse\\(|redirect_to|to_route|RedirectResponse|HttpResponseRedirect|sendRedirect|header\\()";

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * `file:line` of source that redirects or navigates to the template's page, if the source is available.
 * A redirect the page itself serves (its own form's `data-redirect="/page"`, back to itself after saving)
 * is no way in: matches whose text appears in `ownPage` (the page's HTML as served) are passed over.
 */
export function redirectInSource(context: ToolContext, template: string, ownPage = ""): string | undefined {
  const root = context.target?.root;
  if (!root) return undefined;
  const last = pathOnly(template)
    .split("/")
    .filter((segment) => segment && !isParameterSegment(segment))
    .at(-1);
  if (!last || last.length < 3) return undefined;
  // The segment as a word after a redirecting call on the same line: `res.redirect("/welcome")`,
  // `redirect(url_for("welcome"))`, `navigate(\`/tasks/${id}/history\`)`.
  const pattern = `${REDIRECTING}[^\\n]{0,160}[/'"\`]${escapeRegExp(last)}\\b`;
  const result = searchCode(root, {
    query: pattern,
    regex: true,
    caseSensitive: true,
    maxResults: 20,
    answerKey: context.target?.goldenLedger,
  });
  if (typeof result === "string") return undefined;
  const redirect = new RegExp(pattern);
  // Tests navigate wherever they like; only the application's own redirects show how people arrive.
  const match = result.matches.find((each) => {
    if (isTestPath(each.file)) return false;
    const text = redirect.exec(each.text)?.[0];
    return !text || !ownPage.includes(text);
  });
  return match ? `${match.file}:${match.line}` : undefined;
}

import type { StepCode } from "./step-codes.ts";

// Turns what a browser step tool answered into how the exploratory step counts. A tool error is almost
// always the setup (no page, no account, the target gone, a locator that matched nothing); only a check that
// ran and disagreed is the product being wrong, and that is decided by the walker, not here.

/** The code for a step tool's error message. Unknown errors get no code: they count as blocked-unknown. */
export function codeOfToolError(error: string): StepCode | undefined {
  // Order matters: a locator or connection error can quote a URL or a label that reads "login".
  if (/no role "/i.test(error)) return "CREDENTIAL_MISSING";
  if (/strict mode violation|resolved to \d+ elements|ambiguous/i.test(error)) return "LOCATOR_AMBIGUOUS";
  if (/no element matches|not (?:found|visible)/i.test(error)) return "LOCATOR_NOT_FOUND";
  if (
    /ECONNREFUSED|ENOTFOUND|ECONNRESET|ERR_CONNECTION|ERR_NAME|net::|timeout|timed out|no base url|mode is none|not the target|browser(?:Type)?\.launch|Executable doesn't exist|no page is open/i.test(
      error,
    )
  )
    return "ENVIRONMENT_UNAVAILABLE";
  if (/sign[- ]?in|log[- ]?in|credential|secret_ref|password|unauthori[sz]ed|\b401\b/i.test(error))
    return "CREDENTIAL_MISSING";
  return undefined;
}

/** What `navigate` answered, as the walker needs it. */
export interface PageOpened {
  status: number | null;
  url: string;
  title: string;
  error?: string;
  console_errors?: string[];
  page_errors?: string[];
}

/** A page that did not open is the environment; 401/403 is the account; any other status opened. */
export function codeOfOpenedPage(page: PageOpened): StepCode | undefined {
  if (page.error || page.status === null)
    return codeOfToolError(page.error ?? "") ?? "ENVIRONMENT_UNAVAILABLE";
  if (page.status === 401 || page.status === 403) return "CREDENTIAL_MISSING";
  return undefined;
}

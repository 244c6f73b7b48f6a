import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { untilBudget, usableUsers } from "../session/probe-run.ts";
import { checkCors } from "./misconfig-cors.ts";
import { checkDebugRoutes } from "./misconfig-debug.ts";
import { checkVerboseErrors } from "./misconfig-errors.ts";
import { checkExposedFiles } from "./misconfig-files.ts";
import { checkSecurityHeaders } from "./misconfig-headers.ts";
import { checkDirectoryListings } from "./misconfig-listing.ts";

export interface MisconfigurationOptions {
  /** Also try short lists of well-known debug paths, files and folders the map does not list. */
  guess_paths?: boolean;
}

/**
 * check_misconfiguration: CORS that grants credentials to an arbitrary origin; debug, console, environment
 * and metrics routes that answer anonymous callers with internals; files a web server should never hand out
 * (VCS metadata, environment files, dumps, backups); directory listings; server errors that show a stack
 * trace or debug page; and HTML answers without the basic security headers. Each check judges content against a control answer, never the status alone.
 */
export async function checkMisconfiguration(
  run: ProbeRun,
  options: MisconfigurationOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const candidates: EnvelopeDraft[] = [];
  const stats = {
    cors_checked: 0,
    debug_checked: 0,
    files_checked: 0,
    folders_checked: 0,
    errors_provoked: 0,
    pages_checked: 0,
  };
  const guess = options.guess_paths !== false;
  const users = await usableUsers(run);
  const user = users[0]?.name;
  const checks: Array<() => Promise<EnvelopeDraft[]>> = [
    () => checkDebugRoutes(run, guess, stats),
    () => (guess ? checkExposedFiles(run, stats) : Promise.resolve([])),
    () => checkCors(run, user, stats),
    () => checkDirectoryListings(run, stats),
    () => checkVerboseErrors(run, users, stats),
    () => checkSecurityHeaders(run, user, stats),
  ];
  // One after the other, each under the budget on its own: a check cut short loses only its own findings.
  let exhausted = false;
  for (const check of checks) {
    if (exhausted) break;
    exhausted = await untilBudget(run, async () => {
      candidates.push(...(await check()));
    });
  }
  return { candidates, stats: { ...stats, budget_exhausted: exhausted } };
}

import type { Denial, GuardScope } from "./scope.ts";
import { deny, quote } from "./scope.ts";

// force-push, no-merge and draft-only: what happens to a branch after an agent commits is left to people.
// Branches are only ever added to, integration happens by a person, and a pull request starts as a draft.

export function judgeForcePush(branch: string, force: boolean, scope: GuardScope): Denial | undefined {
  if (force === false) return undefined;
  return deny(
    "force-push",
    `${scope.agent.name} may not force-push ${quote(String(branch))}: a force-push rewrites history others may already have read, and no agent ever does it. Add a new commit on top and push without force instead.`,
  );
}

export function judgeMerge(branch: string, scope: GuardScope): Denial {
  return deny(
    "no-merge",
    `${scope.agent.name} may not merge ${quote(String(branch))}: nothing in qaas merges — a change reaches another branch only when a person accepts a draft pull request. Leave the branch as it is and open a draft pull request instead.`,
  );
}

export function judgeDraft(branch: string, draft: boolean, scope: GuardScope): Denial | undefined {
  if (draft === true) return undefined;
  return deny(
    "draft-only",
    `${scope.agent.name} may not open a ready-for-review pull request from ${quote(String(branch))}: agents only open drafts, and a person decides when one is ready. Open it again with draft set to true.`,
  );
}

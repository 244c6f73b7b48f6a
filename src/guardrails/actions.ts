// What a tool call would do, in the terms the guardrails judge. Tools describe their calls as actions;
// check() never needs to know a tool's internals, and a new tool reuses the rules that already exist.

export type GuardedAction =
  /** Read a file of the target (the golden ledger is never readable). */
  | { kind: "read_file"; path: string }
  /** Create or overwrite a file of the target; `changedLines` counts toward the diff budget. */
  | { kind: "write_file"; path: string; changedLines: number }
  | { kind: "git_branch"; branch: string }
  | { kind: "git_commit"; branch: string; paths: string[] }
  | { kind: "git_push"; branch: string; force: boolean }
  | { kind: "git_merge"; branch: string }
  | { kind: "shell"; command: string }
  | { kind: "ticket_create" }
  /** A request to the live target; writes are limited for `external` targets. */
  | { kind: "http_request"; method: string; url: string }
  /** Open a pull request; only drafts exist. */
  | { kind: "pull_request"; branch: string; draft: boolean }
  /**
   * Operate a control in the browser (click, fill, select, press) on the page at `url`. `destructive` says
   * why the control may sign out, delete or spend (undefined when it reads harmless); `createdByRun` that
   * the page shows a record the run itself created.
   */
  | {
      kind: "ui_action";
      action: string;
      control: string;
      url: string;
      destructive: string | undefined;
      createdByRun: boolean;
    };

export type GuardDecision = { allowed: true } | { allowed: false; rule: GuardRule; reason: string };

export const GUARD_RULES = [
  "tool-allowlist",
  "write-scope",
  "golden-ledger",
  "forbidden-path",
  "branch-scope",
  "protected-branch",
  "force-push",
  "no-merge",
  "ticket-cap",
  "diff-budget",
  "immutable-test",
  "forbidden-command",
  "external-writes",
  "draft-only",
  "destructive-ui",
  /** The guardrails could not judge a call (an unknown action, an internal fault): refused, never waved through. */
  "guard-fault",
] as const;

export type GuardRule = (typeof GUARD_RULES)[number];

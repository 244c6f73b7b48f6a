import type { TrackerConfig } from "../config/system-schema.ts";
import { QaasError } from "../errors.ts";
import { resolveSecret } from "../targets/secrets.ts";
import { GithubTracker } from "./github-tracker.ts";
import { JiraTracker } from "./jira-tracker.ts";
import { LocalTracker } from "./local-tracker.ts";
import type { TrackerAdapter } from "./tracker.ts";

// The adapter `tracker:` in config/system.yaml asks for. Credentials are read from the environment here,
// when a tracker is about to be used, and live only inside the adapter's client.

type Environment = Record<string, string | undefined>;

export function createTracker(
  tracker: TrackerConfig,
  home: string,
  env: Environment = process.env,
): TrackerAdapter {
  switch (tracker.kind) {
    case "local":
      return new LocalTracker(home);
    case "github": {
      const settings = required(tracker.github, "github");
      return new GithubTracker({
        owner: settings.owner,
        repo: settings.repo,
        token: resolveSecret(settings.token, env, "tracker.github.token in config/system.yaml"),
        ...(settings.base_url ? { baseUrl: settings.base_url } : {}),
      });
    }
    case "jira": {
      const settings = required(tracker.jira, "jira");
      return new JiraTracker({
        baseUrl: settings.base_url,
        project: settings.project,
        email: settings.email.startsWith("secret_ref:")
          ? resolveSecret(settings.email, env, "tracker.jira.email in config/system.yaml")
          : settings.email,
        token: resolveSecret(settings.token, env, "tracker.jira.token in config/system.yaml"),
        issueType: settings.issue_type,
      });
    }
  }
}

function required<Settings>(settings: Settings | undefined, kind: "github" | "jira"): Settings {
  if (settings === undefined) {
    throw new QaasError(
      "TRACKER_CONFIG_MISSING",
      `tracker.kind is ${kind} but tracker.${kind} is not set in config/system.yaml`,
    );
  }
  return settings;
}

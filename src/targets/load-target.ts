import fs from "node:fs";
import path from "node:path";
import { ConfigError, formatFieldPath, hasErrors, type Problem } from "../config/config-errors.ts";
import { DEFAULT_CONFIG_DIR } from "../config/load-config.ts";
import { readYamlFile, reporter, schemaProblems, walkPairs, type YamlSource } from "../config/yaml-source.ts";
import { QaasError } from "../errors.ts";
import type { LoadedTarget } from "../tools/context.ts";
import { blockedPortReason } from "./blocked-ports.ts";
import { type TargetProfile, TargetProfileSchema } from "./profile-schema.ts";

// A target profile says where the code is and how to reach the app. It may name credentials only by
// reference (secret_ref:NAME); anything that looks like a credential written in the file is refused.

/** Key names that carry a credential when given a literal value. */
const CREDENTIAL_KEY =
  /pass(word|wd|phrase)?$|secret|token|api[_-]?key|apikey|credential|private[_-]?key|access[_-]?key/i;
/** Keys that match CREDENTIAL_KEY by name but hold a location or a recipe, not a credential. */
const NOT_CREDENTIAL_KEYS = new Set(["token_from", "secrets_file"]);
/** `{password}` in a login body is a placeholder filled from the user at sign-in time. */
const PLACEHOLDER = /^\{[A-Za-z_][A-Za-z0-9_]*\}$/;
/** `scheme://user:password@host` */
const URL_WITH_CREDENTIAL = /^[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:[^/\s@]+@/i;

export interface LoadTargetOptions {
  /** The configuration folder whose `targets/` holds named profiles (default: the package's config/). */
  configDir?: string;
}

/** `demo` → `<configDir>/targets/demo.yaml`; `./x.yaml`, `a/b` → that file. Throws ConfigError listing every problem. */
export function loadTarget(nameOrPath: string, options: LoadTargetOptions = {}): LoadedTarget {
  const file = resolveProfileFile(nameOrPath, options.configDir ?? DEFAULT_CONFIG_DIR);
  const problems: Problem[] = [];
  const source = readYamlFile(file, problems);
  if (source.document === undefined || source.document.errors.length > 0) {
    throw new ConfigError(problems, "TARGET_INVALID", `target profile ${source.display}`);
  }
  const credentialProblems = scanCredentials(source);
  const credentialPaths = new Set(credentialProblems.map((problem) => problem.path));
  problems.push(...credentialProblems);
  const parsed = TargetProfileSchema.safeParse(source.value);
  if (!parsed.success) {
    // A literal credential is already reported with a clearer message than the schema's.
    const schema = schemaProblems(source, TargetProfileSchema, parsed.error);
    problems.push(...schema.filter((problem) => !credentialPaths.has(problem.path)));
    throw new ConfigError(problems, "TARGET_INVALID", `target profile ${source.display}`);
  }
  const profile = parsed.data;
  const here = path.dirname(file);
  const root = profile.source.path === undefined ? undefined : path.resolve(here, profile.source.path);
  problems.push(...checkProfile(profile, source, root));
  if (hasErrors(problems))
    throw new ConfigError(problems, "TARGET_INVALID", `target profile ${source.display}`);
  const goldenLedger =
    profile.golden_ledger === undefined ? undefined : path.resolve(root ?? here, profile.golden_ledger);
  return { profile, file, root, goldenLedger };
}

/** Names of the profiles in `<configDir>/targets/`. */
export function listTargets(configDir: string = DEFAULT_CONFIG_DIR): string[] {
  const dir = path.join(configDir, "targets");
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((name) => /\.ya?ml$/.test(name))
    .map((name) => name.replace(/\.ya?ml$/, ""))
    .sort();
}

function resolveProfileFile(nameOrPath: string, configDir: string): string {
  const isPath = /[/\\]/.test(nameOrPath) || /\.ya?ml$/.test(nameOrPath);
  if (isPath) {
    const file = path.resolve(nameOrPath);
    if (!fs.existsSync(file)) throw new QaasError("TARGET_NOT_FOUND", `target profile not found: ${file}`);
    return file;
  }
  for (const extension of [".yaml", ".yml"]) {
    const file = path.join(configDir, "targets", `${nameOrPath}${extension}`);
    if (fs.existsSync(file)) return file;
  }
  const available = listTargets(configDir);
  throw new QaasError(
    "TARGET_NOT_FOUND",
    `no target named "${nameOrPath}" in ${path.join(configDir, "targets")} (available: ${
      available.length > 0 ? available.join(", ") : "none"
    }); pass a profile path, or create one with \`qaas init\``,
  );
}

/** Credentials written into the file, found by key name or by a URL carrying user:password. */
function scanCredentials(source: YamlSource): Problem[] {
  const problems: Problem[] = [];
  for (const { segments, key, value, line } of walkPairs(source)) {
    if (value === null || value === undefined || (typeof value === "object" && value !== null)) continue;
    const text = String(value);
    const field = formatFieldPath(segments);
    if (URL_WITH_CREDENTIAL.test(text)) {
      problems.push({
        file: source.display,
        line,
        path: field,
        message:
          "this URL carries a user and password; write secret_ref:ENV_NAME and put the URL in that variable",
        severity: "error",
      });
      continue;
    }
    if (!CREDENTIAL_KEY.test(key) || NOT_CREDENTIAL_KEYS.has(key)) continue;
    if (text === "" || text.startsWith("secret_ref:") || PLACEHOLDER.test(text)) continue;
    problems.push({
      file: source.display,
      line,
      path: field,
      message:
        "literal credential refused: a profile never holds a credential; write secret_ref:ENV_NAME and set that environment variable",
      severity: "error",
    });
  }
  return problems;
}

/** What the schema cannot see: files that must exist and settings that only make sense together. */
function checkProfile(profile: TargetProfile, source: YamlSource, root: string | undefined): Problem[] {
  const problems: Problem[] = [];
  const report = reporter(problems, source);

  const fileName = path.basename(source.file).replace(/\.ya?ml$/, "");
  if (profile.name !== fileName) {
    report(
      ["name"],
      `profile "${profile.name}" is in ${path.basename(source.file)}; name it "${fileName}" so --target finds it`,
      "warning",
    );
  }
  if (profile.source.path === undefined && profile.source.git_url === undefined) {
    report(["source"], "say where the code is: source.path (relative to this file) or source.git_url");
  }
  if (root !== undefined && !(fs.existsSync(root) && fs.statSync(root).isDirectory())) {
    report(["source", "path"], `folder not found: ${root} (source.path is relative to the profile's folder)`);
  }
  const environment = profile.environment;
  if (environment.mode !== "none" && environment.base_url === undefined) {
    report(
      ["environment", "base_url"],
      `mode "${environment.mode}" needs base_url (where the running app answers)`,
    );
  }
  const blocked = environment.base_url === undefined ? undefined : blockedPortReason(environment.base_url);
  if (blocked) report(["environment", "base_url"], blocked, "warning");
  if (environment.mode === "managed" && environment.start === undefined) {
    report(
      ["environment", "start"],
      'mode "managed" needs a start command (qaas starts, seeds, resets and stops the app)',
    );
  }
  if (environment.mode === "none" && environment.base_url !== undefined) {
    report(["environment", "base_url"], 'mode "none" is static only: base_url is ignored', "warning");
  }
  const userNames = new Set<string>();
  for (const [index, user] of profile.users.entries()) {
    if (userNames.has(user.name)) report(["users", index, "name"], `user "${user.name}" is declared twice`);
    userNames.add(user.name);
    if (user.password !== undefined && user.username === undefined) {
      report(["users", index], `user "${user.name}" has a password but no username`, "warning");
    }
  }
  const login = profile.auth?.login;
  if (login !== undefined && (login.kind === "json" || login.kind === "form")) {
    if (login.kind === "json" && login.endpoint === undefined)
      report(["auth", "login"], 'a json login needs endpoint: "METHOD /path"');
    if (login.kind === "form" && login.endpoint === undefined && login.page === undefined) {
      report(
        ["auth", "login"],
        'a form login needs endpoint: "METHOD /path" (where the form posts) or page: /path (where the form is)',
      );
    }
    if (login.endpoint !== undefined && !/^[A-Za-z]+\s+\/\S*$/.test(login.endpoint.trim()))
      report(["auth", "login", "endpoint"], `must be "METHOD /path", got "${login.endpoint}"`);
    if (login.token_from !== undefined && !/^(body|header|cookie):.+$/.test(login.token_from))
      report(["auth", "login", "token_from"], "must be body:<json.path>, header:<name> or cookie:<name>");
    if (login.body !== undefined && !Object.values(login.body).some((value) => value.includes("{password}")))
      report(["auth", "login", "body"], "no field of the login body uses {password}", "warning");
  }
  const signup = profile.auth?.signup;
  if (signup !== undefined) {
    if (!signup.allowed) {
      report(
        ["auth", "signup", "allowed"],
        "sign-up is declared but not allowed: no throw-away user will be registered (set allowed: true to let qaas create a few)",
        "warning",
      );
    }
    if (login === undefined || login.kind === "bearer" || login.kind === "api_key") {
      report(
        ["auth", "signup"],
        "throw-away users sign in with auth.login, which must be a json or form login",
      );
    }
    const values = Object.values(signup.body ?? {});
    if (signup.body !== undefined && !values.some((value) => value.includes("{password}")))
      report(["auth", "signup", "body"], "the sign-up body must use {password}");
    if (signup.body !== undefined && !values.some((value) => /\{(username|email)\}/.test(value)))
      report(["auth", "signup", "body"], "the sign-up body must use {username} or {email}");
  }
  if (login !== undefined && (login.kind === "bearer" || login.kind === "api_key")) {
    for (const [index, user] of profile.users.entries()) {
      if (user.token === undefined)
        report(
          ["users", index],
          `a ${login.kind} login needs token: secret_ref:NAME for each user`,
          "warning",
        );
    }
  }
  return problems;
}

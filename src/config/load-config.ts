import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type AgentConfig, AgentConfigSchema } from "./agent-schema.ts";
import { checkCoherence } from "./coherence.ts";
import { ConfigError, hasErrors, type Problem, sortProblems } from "./config-errors.ts";
import { type SystemConfig, SystemConfigSchema } from "./system-schema.ts";
import { lineAt, readYamlFile, schemaProblems, type YamlSource } from "./yaml-source.ts";

/** The qaas package itself (prompts and playbooks ship inside it, wherever the config folder is). */
export const PACKAGE_ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const DEFAULT_CONFIG_DIR = path.join(PACKAGE_ROOT, "config");
export const PROMPTS_DIR = path.join(PACKAGE_ROOT, "src", "agents", "prompts");
export const PLAYBOOKS_DIR = path.join(PACKAGE_ROOT, "src", "agents", "playbooks");
/** The shared rules appended to every agent's prompt. */
export const HOUSE_RULES_FILE = path.join(PROMPTS_DIR, "HOUSE_RULES.md");

export interface LoadedAgent {
  config: AgentConfig;
  /** Absolute path of the agent's YAML file. */
  file: string;
  promptFile: string;
  playbookFile: string | undefined;
}

export interface LoadedConfig {
  dir: string;
  system: SystemConfig;
  /** By agent name, in file-name order. */
  agents: Map<string, LoadedAgent>;
}

/** What reading found, valid or not, with the parsed sources kept for coherence checks to point at lines. */
export interface ConfigReading {
  dir: string;
  systemSource: YamlSource | undefined;
  system: SystemConfig | undefined;
  agents: Array<{ loaded: LoadedAgent; source: YamlSource; playbookDeclared: boolean }>;
  /** Names of every agent file found, valid or not, so a broken agent is not also reported as missing. */
  agentNames: Set<string>;
  problems: Problem[];
}

/** Loads and checks everything; throws one ConfigError listing every error. Warnings do not stop loading. */
export function loadConfig(configDir: string = DEFAULT_CONFIG_DIR): LoadedConfig {
  const reading = readConfig(configDir);
  const problems = sortProblems([...reading.problems, ...checkCoherence(reading)]);
  if (hasErrors(problems) || reading.system === undefined) throw new ConfigError(problems);
  return {
    dir: reading.dir,
    system: reading.system,
    agents: new Map(reading.agents.map(({ loaded }) => [loaded.config.name, loaded])),
  };
}

/** `MAPPER`, `DATA_GUARD` from `mapper.yaml`, `data-guard.yaml`. */
export function agentNameOfFile(file: string): string {
  return path
    .basename(file)
    .replace(/\.ya?ml$/, "")
    .toUpperCase()
    .replaceAll("-", "_");
}

/** `DATA_GUARD` → `data-guard`: the default playbook module name. */
export function kebabName(agentName: string): string {
  return agentName.toLowerCase().replaceAll("_", "-");
}

/** The agent's prompt followed by the house rules every agent shares. */
export function agentPrompt(agent: LoadedAgent): string {
  const prompt = fs.readFileSync(agent.promptFile, "utf8").trim();
  const houseRules = fs.readFileSync(HOUSE_RULES_FILE, "utf8").trim();
  return `${prompt}\n\n${houseRules}\n`;
}

export function readConfig(configDir: string = DEFAULT_CONFIG_DIR): ConfigReading {
  const dir = path.resolve(configDir);
  const reading: ConfigReading = {
    dir,
    systemSource: undefined,
    system: undefined,
    agents: [],
    agentNames: new Set(),
    problems: [],
  };
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    reading.problems.push({
      file: dir,
      path: "",
      message: "configuration folder not found (expected system.yaml and agents/*.yaml in it)",
      severity: "error",
    });
    return reading;
  }
  readSystem(reading);
  readAgents(reading);
  return reading;
}

function readSystem(reading: ConfigReading): void {
  const source = readYamlFile(path.join(reading.dir, "system.yaml"), reading.problems);
  reading.systemSource = source;
  if (source.document === undefined || source.document.errors.length > 0) return;
  const parsed = SystemConfigSchema.safeParse(source.value);
  if (parsed.success) reading.system = parsed.data;
  else reading.problems.push(...schemaProblems(source, SystemConfigSchema, parsed.error));
}

function readAgents(reading: ConfigReading): void {
  const agentsDir = path.join(reading.dir, "agents");
  const files = fs.existsSync(agentsDir)
    ? fs
        .readdirSync(agentsDir)
        .filter((name) => /\.ya?ml$/.test(name))
        .sort()
    : [];
  if (files.length === 0) {
    reading.problems.push({
      file: agentsDir,
      path: "",
      message: "no agent files (expected agents/<name>.yaml)",
      severity: "error",
    });
    return;
  }
  for (const name of files) {
    const file = path.join(agentsDir, name);
    reading.agentNames.add(agentNameOfFile(file));
    const source = readYamlFile(file, reading.problems);
    if (source.document === undefined || source.document.errors.length > 0) continue;
    const parsed = AgentConfigSchema.safeParse(source.value);
    if (!parsed.success) {
      reading.problems.push(...schemaProblems(source, AgentConfigSchema, parsed.error));
      continue;
    }
    const config = parsed.data;
    const expected = agentNameOfFile(file);
    if (config.name !== expected) {
      reading.problems.push({
        file: source.display,
        line: lineAt(source, ["name"]),
        path: "name",
        message: `agent name "${config.name}" must match its file name: expected "${expected}" (or rename the file to ${kebabName(config.name)}.yaml)`,
        severity: "error",
      });
    }
    const here = path.dirname(file);
    const promptFile =
      config.prompt === undefined
        ? path.join(PROMPTS_DIR, `${config.name}.md`)
        : path.resolve(here, config.prompt);
    const defaultPlaybook = path.join(PLAYBOOKS_DIR, `${kebabName(config.name)}.ts`);
    const playbookFile =
      config.playbook === undefined
        ? fs.existsSync(defaultPlaybook)
          ? defaultPlaybook
          : undefined
        : path.resolve(here, config.playbook);
    if (config.gate && (playbookFile === undefined || !config.tools.includes(config.gate.tool))) {
      reading.problems.push({
        file: source.display,
        line: lineAt(source, ["gate"]),
        path: "gate",
        message:
          playbookFile === undefined
            ? `a gate runs the agent's builtin playbook first, and ${config.name} has none (add ${path.relative(PACKAGE_ROOT, defaultPlaybook)} or remove "gate")`
            : `the gate decides through ${config.gate.tool}, which is not in ${config.name}'s tools`,
        severity: "error",
      });
    }
    reading.agents.push({
      loaded: { config, file, promptFile, playbookFile },
      source,
      playbookDeclared: config.playbook !== undefined,
    });
  }
}

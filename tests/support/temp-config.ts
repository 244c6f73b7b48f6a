import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse, stringify } from "yaml";

// A throwaway qaas project for black-box engine tests: a copy of the shipped config/ that a test can
// extend with agents (YAML + prompt + playbook), run modes and target profiles, plus a store home.

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

export interface TempProject {
  dir: string;
  configDir: string;
  home: string;
  addAgent(agent: { name: string; yaml: Record<string, unknown>; prompt?: string; playbook?: string }): void;
  addMode(name: string, mode: Record<string, unknown>): void;
  addTarget(name: string, profile: Record<string, unknown>): string;
  patchSystem(patch: (system: Record<string, unknown>) => void): void;
}

export function tempProject(): TempProject {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-project-"));
  const configDir = path.join(dir, "config");
  // Playbooks dropped here are ES modules, as in any "type": "module" project.
  fs.writeFileSync(path.join(dir, "package.json"), '{ "type": "module" }\n');
  fs.cpSync(path.join(REPO_ROOT, "config/system.yaml"), path.join(configDir, "system.yaml"));
  fs.cpSync(path.join(REPO_ROOT, "config/agents"), path.join(configDir, "agents"), { recursive: true });
  fs.mkdirSync(path.join(configDir, "targets"), { recursive: true });
  const home = path.join(dir, "home");
  const systemFile = path.join(configDir, "system.yaml");
  return {
    dir,
    configDir,
    home,
    addAgent({ name, yaml, prompt, playbook }) {
      const base = name.toLowerCase().replaceAll("_", "-");
      const agentDir = path.join(configDir, "agents");
      const fields: Record<string, unknown> = { name, ...yaml };
      fs.writeFileSync(
        path.join(dir, `${base}.md`),
        prompt ?? `# ${name}\n\nYou are ${name}, a test agent.\n`,
      );
      fields.prompt = `../../${base}.md`;
      if (playbook) {
        fs.writeFileSync(path.join(dir, `${base}.playbook.ts`), playbook);
        fields.playbook = `../../${base}.playbook.ts`;
      }
      fs.writeFileSync(path.join(agentDir, `${base}.yaml`), stringify(fields));
    },
    addMode(name, mode) {
      patchSystem((system) => {
        (system.run_modes as Record<string, unknown>)[name] = mode;
      });
    },
    addTarget(name, profile) {
      const file = path.join(configDir, "targets", `${name}.yaml`);
      fs.writeFileSync(file, stringify({ name, ...profile }));
      return file;
    },
    patchSystem,
  };

  function patchSystem(patch: (system: Record<string, unknown>) => void): void {
    const system = parse(fs.readFileSync(systemFile, "utf8")) as Record<string, unknown>;
    patch(system);
    fs.writeFileSync(systemFile, stringify(system));
  }
}

import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { auditDependencies } from "../../probes/deps/audit.ts";
import { LOCKFILE_NAMES } from "../../probes/deps/lockfiles.ts";
import type { ToolContext } from "../context.ts";
import { err, ok } from "../result.ts";
import type { ToolDefinition } from "../tool.ts";
import { defineTool } from "../tool.ts";

function lockfileReads(context: ToolContext): Array<{ kind: "read_file"; path: string }> {
  const root = context.target?.root;
  if (!root) return [];
  return LOCKFILE_NAMES.filter((name) => fs.existsSync(path.join(root, name))).map((name) => ({
    kind: "read_file" as const,
    path: name,
  }));
}

export const auditDependenciesTool = defineTool({
  name: "audit_dependencies",
  server: "deps",
  description:
    "Read the target's lockfiles (package-lock.json v1-3, yarn.lock, pnpm-lock.yaml, requirements.txt, poetry.lock, Pipfile.lock; root and one level of subfolders) and match every pinned version against the advisory snapshot shipped with qaas (Node.js security WG, PyPA, RetireJS and curated GHSA records; ranges read by semver and PEP 440). The answer's stats carry the snapshot's date, sources and data age (with a note when older than 90 days). One candidate per vulnerable name@version (location `dependency`); transitive pins are held (confidence 0.6). Needs no live target.",
  input: z.strictObject({
    /** Also report packages only pulled in by others at full confidence. */
    include_transitive: z.boolean().default(false),
  }),
  actions: (_input, context) => lockfileReads(context),
  async run(input, context) {
    const root = context.target?.root;
    if (!root)
      return err(
        "audit_dependencies: the target has no source root (profile source.path or --repo); lockfiles cannot be read",
      );
    try {
      return ok(auditDependencies(context, root, { includeTransitive: input.include_transitive }));
    } catch (error) {
      return err(`audit_dependencies: ${error instanceof Error ? error.message : String(error)}`);
    }
  },
});

export const depsTools: ToolDefinition[] = [auditDependenciesTool];

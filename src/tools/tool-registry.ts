import { authzTools } from "./servers/authz-server.ts";
import { browserTools } from "./servers/browser-server.ts";
import { browserStepTools } from "./servers/browser-steps-server.ts";
import { bugBashTools } from "./servers/bug-bash-server.ts";
import { codeTools } from "./servers/code-server.ts";
import { contractTools } from "./servers/contract-server.ts";
import { dbTools } from "./servers/db-server.ts";
import { decisionTools } from "./servers/decisions-server.ts";
import { defectMemoryTools } from "./servers/defect-memory-server.ts";
import { depsTools } from "./servers/deps-server.ts";
import { envControlTools } from "./servers/env-control-server.ts";
import { envelopeTools } from "./servers/envelope-server.ts";
import { guideTools } from "./servers/guide-server.ts";
import { httpTools } from "./servers/http-server.ts";
import { loadTools } from "./servers/load-server.ts";
import { mapTools } from "./servers/map-server.ts";
import { reportTools } from "./servers/report-server.ts";
import { reproductionTools } from "./servers/reproductions-server.ts";
import { reviewTools } from "./servers/review-server.ts";
import { securityTools } from "./servers/security-server.ts";
import { testRunnerTools } from "./servers/test-runner-server.ts";
import { trackerTools } from "./servers/tracker-server.ts";
import { vcsTools } from "./servers/vcs-server.ts";
import { wsTools } from "./servers/ws-server.ts";
import type { ToolDefinition } from "./tool.ts";

// Every implemented tool, by server. A tool exists for agents only once it is listed here; names come
// from the catalog, and a test keeps the two in step.
export const IMPLEMENTED_TOOLS: readonly ToolDefinition[] = [
  ...envelopeTools,
  ...defectMemoryTools,
  ...decisionTools,
  ...mapTools,
  ...wsTools,
  ...codeTools,
  ...dbTools,
  ...loadTools,
  ...httpTools,
  ...contractTools,
  ...authzTools,
  ...securityTools,
  ...depsTools,
  ...browserTools,
  ...browserStepTools,
  ...bugBashTools,
  ...guideTools,
  ...reportTools,
  ...trackerTools,
  ...reproductionTools,
  ...testRunnerTools,
  ...vcsTools,
  ...reviewTools,
  ...envControlTools,
];

const byName = new Map(IMPLEMENTED_TOOLS.map((tool) => [tool.name, tool]));

export function findTool(name: string): ToolDefinition | undefined {
  return byName.get(name);
}

export function implementedToolNames(): Set<string> {
  return new Set(byName.keys());
}

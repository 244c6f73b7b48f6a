import { QaasError } from "../../errors.ts";
import { definePlaybook } from "../playbook.ts";

// MAPPER without a model: read every part of the target the profile describes, then save the map.
// Each map_* tool answers `skipped` for a part the target does not have, so the playbook needs no
// knowledge of the profile; a part that fails is logged and the rest of the map is still saved.
// Only a failure to save the map itself fails the agent.

const STEPS: Array<{ tool: string; what: string }> = [
  { tool: "map_openapi", what: "OpenAPI document" },
  { tool: "map_source_routes", what: "source routes" },
  // Pages are crawled as each role; the frontend's calls and the pages' own traffic reuse that crawl.
  { tool: "map_pages", what: "pages" },
  { tool: "map_frontend", what: "frontend calls" },
  { tool: "map_traffic", what: "observed traffic" },
  // After routes and pages: GraphQL endpoints are looked for in what they found first.
  { tool: "map_graphql", what: "GraphQL" },
  { tool: "map_database", what: "database schema" },
  { tool: "map_ownership", what: "ownership" },
];

export default definePlaybook(async (session) => {
  for (const step of STEPS) {
    if (session.signal.aborted) break;
    const result = await session.call<Record<string, unknown>>(step.tool, {});
    if (!result.ok) {
      session.log(`${step.what}: failed (${result.error}); continuing without it`);
    } else if (result.data.skipped === true) {
      session.log(`${step.what}: skipped (${String(result.data.reason)})`);
    } else {
      session.log(`${step.what}: ${describe(result.data)}`);
    }
  }
  const saved = await session.call<{ version: number; counts: Record<string, number> }>(
    "save_system_map",
    {},
  );
  // Without a saved map every later agent runs blind: that failure is the run's to see, not a log line.
  if (!saved.ok) throw new QaasError("MAP_NOT_SAVED", `system map not saved: ${saved.error}`);
  session.log(`system map v${saved.data.version} saved: ${describe(saved.data.counts)}`);
});

/** The numeric fields of a summary, as `name=value` pairs, for a one-line log. */
function describe(data: Record<string, unknown>): string {
  const pairs = Object.entries(data).filter(([, value]) => typeof value === "number");
  return pairs.length > 0 ? pairs.map(([name, value]) => `${name}=${value}`).join(" ") : "done";
}

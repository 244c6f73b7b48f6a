// Every tool name an agent's allowlist may use, by server. A name here with no implementation yet is
// "planned": `qaas validate` warns about it, and calling it answers err("not available"), never a crash.

export const TOOL_CATALOG = {
  envelope: ["emit_envelope", "get_system_map", "put_artifact", "list_findings", "get_finding"],
  defect_memory: ["fingerprint_envelope", "search_similar", "record_occurrence", "get_occurrences"],
  map: [
    "map_openapi",
    "map_source_routes",
    "map_pages",
    "map_frontend",
    "map_traffic",
    "map_graphql",
    "map_database",
    "map_ownership",
    "save_system_map",
  ],
  http: ["http_request", "sign_in"],
  contract: [
    "check_contract",
    "fuzz_operation",
    "probe_semantics",
    "find_undocumented",
    "generate_contract_test",
  ],
  authz: ["authz_matrix"],
  security: [
    "probe_injection",
    "probe_xss",
    "scan_exposure",
    "check_misconfiguration",
    "check_graphql",
    "probe_command_injection",
    "probe_template_injection",
    "probe_path_traversal",
    "probe_xxe",
    "probe_ssrf",
    "probe_nosql_injection",
    "probe_open_redirect",
    "probe_insecure_deserialization",
    "probe_log_injection",
    "check_authentication",
  ],
  deps: ["audit_dependencies"],
  db: [
    "db_schema",
    "infer_data_assumptions",
    "confirm_constraint",
    "probe_race",
    "probe_state_integrity",
    "check_credential_storage",
    "query_log",
    "explain_query",
  ],
  load: ["measure_query_growth", "probe_unbounded", "find_unindexed", "time_endpoints", "probe_redos"],
  ws: [
    "ws_probe_auth",
    "ws_probe_authorization",
    "ws_probe_ordering",
    "ws_probe_reconnect",
    "ws_probe_backpressure",
  ],
  code: [
    "import_graph",
    "find_cycles",
    "check_layering",
    "find_god_modules",
    "find_dead_code",
    "search_code",
    "read_file",
  ],
  browser: [
    "navigate",
    "locate",
    "act",
    "expect",
    "accessibility_tree",
    "screenshot",
    "trace",
    "crawl",
    "axe",
    "browse_pages",
    "probe_dom_xss",
    "submit_forms",
  ],
  guide: ["check_navigation", "check_copy"],
  bug_bash: ["list_charters", "walk_charter", "merge_candidates", "verify_candidate"],
  test_runner: ["run_single", "run_n_times", "run_suite", "affected_tests"],
  env_control: ["spin_up", "seed", "reset", "set_flag", "impersonate", "tear_down"],
  tracker: ["create_issue", "transition_issue", "link_issues", "search_issues", "comment_issue"],
  vcs: ["create_branch", "write_file", "commit", "push", "open_pull_request", "branch_diff"],
  decisions: ["record_reproduction", "record_review", "record_verdict", "list_reproductions"],
  report: ["write_run_reports"],
} as const;

export type ToolServerName = keyof typeof TOOL_CATALOG;

export const CATALOG_TOOL_NAMES: ReadonlySet<string> = new Set(Object.values(TOOL_CATALOG).flat());

export function serverOfTool(tool: string): ToolServerName | undefined {
  return (Object.keys(TOOL_CATALOG) as ToolServerName[]).find((server) =>
    (TOOL_CATALOG[server] as readonly string[]).includes(tool),
  );
}

import { definePlaybook } from "../playbook.ts";
import { runProbesAndEmit } from "./api.ts";

// AUDITOR without a model: the security probes — authorization matrix, injection, XSS, sensitive data,
// misconfiguration, broken authentication, vulnerable dependencies — run against the pinned map; every
// distinct candidate is emitted. audit_dependencies needs only the source tree, so it runs even without a
// live target.

const PROBES = [
  "authz_matrix",
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
  "audit_dependencies",
];

export default definePlaybook(async (session) => {
  const map = await session.call("get_system_map", {});
  if (!map.ok) session.log(`no system map (${map.error}): only dependencies can be audited`);
  const signedIn = await session.call<{ errors: Record<string, string>; warnings?: Record<string, string> }>(
    "sign_in",
    {},
  );
  if (!signedIn.ok) session.log(`sign_in: ${signedIn.error}; probing anonymously`);
  else
    for (const [user, problem] of Object.entries({ ...signedIn.data.errors, ...signedIn.data.warnings }))
      session.log(`sign_in ${user}: ${problem}`);
  const tools = map.ok ? PROBES : ["audit_dependencies"];
  const { emitted, duplicates } = await runProbesAndEmit(session, tools);
  session.log(`emitted ${emitted} findings (${duplicates} duplicates dropped)`);
});

import { definePlaybook } from "../playbook.ts";

// REPORTER without a model: one tool call renders every report format from the run's files and stores
// them as artifacts. Rendering is code, not judgement, so the builtin seat and a model seat produce the
// same files; a model adds its reading on top.

interface WrittenReports {
  artifacts: Array<{ format: string; uri: string; bytes: number }>;
}

export default definePlaybook(async (session) => {
  const written = await session.call<WrittenReports>("write_run_reports", {});
  if (!written.ok) {
    session.log(`write_run_reports: ${written.error}`);
    return;
  }
  for (const artifact of written.data.artifacts)
    session.log(`${artifact.format}: ${artifact.uri} (${artifact.bytes} bytes)`);
});

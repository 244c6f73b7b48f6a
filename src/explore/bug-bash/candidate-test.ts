import { createHash } from "node:crypto";
import { type EnvelopeDraft, EnvelopeDraftSchema } from "../../envelope/envelope-draft.ts";
import type { Severity } from "../../envelope/taxonomy.ts";
import {
  type BrowserAssertion,
  ENCODING_ASSERTION,
  renderBrowserTest,
} from "../../probes/browser/browser-test.ts";
import type { Candidate } from "./candidates.ts";

// A pending candidate as an envelope draft whose evidence is a generated browser repro test (the same
// generator BROWSER's findings use). The test carries two marker lines: which candidate it proves, and the
// message of the one assertion that encodes it. Confirmation reads both from the stored test, so what is
// proven is decided by the artifact, not by what an agent says about it.

export const CANDIDATE_MARK = "qaas-candidate:";
export const ENCODES_MARK = "qaas-encodes:";

export interface CandidateEnvelope {
  draft: EnvelopeDraft;
  /** The stored test's artifact URI. */
  test: string;
  encodes: string;
}

/** Stores the candidate's repro test (through `store`, which answers its artifact URI) and drafts its envelope. */
export function candidateEnvelope(
  candidate: Candidate,
  baseUrl: string,
  store: (name: string, content: string) => string,
): CandidateEnvelope | undefined {
  const { finding } = candidate;
  const check = finding.check;
  if (!check) return undefined;
  const assertion: BrowserAssertion =
    check.kind === "page-status"
      ? { kind: "page-status", page: check.page }
      : check.kind === "text-shown"
        ? { kind: "text-shown", page: check.page, text: check.text }
        : { kind: "form-submit", page: check.page, fields: check.fields, button: check.button };
  const encodes = ENCODING_ASSERTION[assertion.kind]!;
  const slug = `bug-bash-${candidate.id.toLowerCase()}-${hashOf(candidate.key)}`;
  const test = renderBrowserTest({ title: finding.title, baseUrl, role: candidate.persona, assertion }, slug);
  const content = `// ${CANDIDATE_MARK} ${candidate.id}\n// ${ENCODES_MARK} ${encodes}\n${test.content}`;
  const uri = store(`bug-bash/${slug}.test.mjs`, content);
  const serverSide = check.kind === "form-submit" || (check.kind === "page-status" && check.status >= 500);
  const draft = EnvelopeDraftSchema.parse({
    domain: "ui",
    defect_class: "broken-journey",
    title: truncate(`${finding.title} (as ${candidate.persona})`, 200),
    summary: `A bug-bash charter (${candidate.charter}, as ${candidate.persona}) expected ${finding.expected}; observed ${finding.observed}.`,
    location: { kind: "page", value: pagePath(check.page) },
    evidence: [
      ...finding.evidence
        .filter((item) => item.path.startsWith("artifact://"))
        .map((item) => ({ kind: "artifact", description: `${item.kind} at the step`, uri: item.path })),
      { kind: "note", description: `expected: ${finding.expected}; observed: ${finding.observed}` },
      {
        kind: "failing_test",
        description: `generated browser repro test of ${candidate.id}; it fails on "${encodes}" while the defect exists`,
        uri,
        test: { path: test.path, name: finding.title, command: test.command },
      },
    ],
    reproduction: { steps: finding.repro, test: { path: test.path, command: test.command } },
    impact: serverSide
      ? "A person following this path meets a server error and cannot go on."
      : "A person following this path does not get what the page promises.",
    severity: severityOf(finding.severity),
    confidence: 0.8,
    autonomy_eligible: false,
    dedupe: { discriminator: candidate.key },
  });
  return { draft, test: uri, encodes };
}

/** Reads the markers back from a stored test: which candidate, and the assertion that encodes it. */
export function markersOf(source: string): { candidate: string; encodes: string } | undefined {
  const candidate = new RegExp(`^// ${CANDIDATE_MARK} (\\S+)$`, "m").exec(source)?.[1];
  const encodes = new RegExp(`^// ${ENCODES_MARK} (.+)$`, "m").exec(source)?.[1];
  return candidate && encodes ? { candidate, encodes: encodes.trim() } : undefined;
}

function severityOf(severity: number): Severity {
  return severity >= 5 ? "critical" : severity === 4 ? "high" : severity === 3 ? "medium" : "low";
}

function pagePath(page: string): string {
  try {
    return new URL(page, "http://x").pathname;
  } catch {
    return page;
  }
}

function hashOf(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 8);
}

function truncate(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}

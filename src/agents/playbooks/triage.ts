import type { DefectEnvelope } from "../../envelope/envelope.ts";
import type { Ticket } from "../../trackers/tracker.ts";
import { type Cluster, clusterFindings } from "../../triage/cluster-findings.ts";
import { definePlaybook, type PlaybookSession } from "../playbook.ts";

// TRIAGE without a model: take the run's fileable findings (once REPRODUCER has recorded any
// reproduction, those it left fileable: reproduced, or untestable with their evidence standing; else those
// with evidence at the confidence threshold), join duplicates and
// symptoms of one root cause, and per root cause either file ONE ticket or — when the tracker already
// has the defect from an earlier run — comment with its occurrence count, reopening a ticket closed as
// fixed. Nothing is filed twice: the tracker is asked first, and create_issue refuses a known fingerprint.

/** A remembered defect this alike (search_similar's 0..1 score) is taken to be the same one. */
const SAME_DEFECT_SCORE = 0.75;

interface Listed {
  id: string;
  state: string;
}

interface Reproduction {
  finding_id: string;
  reproduced: boolean;
  status?: string;
  fileable: boolean;
}

export default definePlaybook(async (session) => {
  const runId = String(session.task.run_id ?? "this run");
  const findings = await fileableFindings(session);
  if (findings === undefined) return;
  const clusters = clusterFindings(findings);
  session.log(`${findings.length} fileable finding(s) in ${clusters.length} root cause(s)`);
  const filedThisRun = new Set<string>();
  let capReached = false;
  const counts = { filed: 0, commented: 0, reopened: 0 };
  for (const cluster of clusters) {
    if (session.signal.aborted) break;
    for (const reason of cluster.reasons) session.log(`joined ${reason}`);
    const known = await knownTicket(session, cluster, filedThisRun);
    if (known !== undefined) {
      const outcome = await updateKnown(session, cluster, known, runId);
      if (outcome) counts[outcome] += 1;
      continue;
    }
    if (capReached) {
      session.log(`not filed (ticket cap reached): ${cluster.primary.title}`);
      continue;
    }
    const created = await session.call<{ key: string }>("create_issue", {
      finding_ids: cluster.members.map((member) => member.id),
      severity: cluster.severity,
      title: cluster.primary.title,
      ...(cluster.members.length > 1
        ? { note: `${cluster.members.length} symptoms of one root cause, filed together.` }
        : {}),
    });
    if (created.ok) {
      filedThisRun.add(created.data.key);
      counts.filed += 1;
      session.log(
        `filed ${created.data.key}: ${cluster.primary.title} (${cluster.members.length} finding(s))`,
      );
    } else if ((created as { details?: { rule?: string } }).details?.rule === "ticket-cap") {
      // Over the cap the rest goes to a person (the runner escalates); known defects still get comments.
      capReached = true;
      session.log(`ticket cap reached: ${created.error}`);
    } else {
      session.log(`could not file "${cluster.primary.title}": ${created.error}`);
    }
  }
  session.log(
    `TRIAGE done: ${counts.filed} filed, ${counts.commented} commented, ${counts.reopened} reopened`,
  );
});

/** The findings this run may file, read in full; undefined when they cannot be read. */
async function fileableFindings(session: PlaybookSession): Promise<DefectEnvelope[] | undefined> {
  const listed = await session.call<{ findings: Listed[] }>("list_findings", {});
  if (!listed.ok) {
    session.log(`findings not listed: ${listed.error}`);
    return undefined;
  }
  const reproductions = await session.call<{ reproductions: Reproduction[] }>("list_reproductions", {});
  const recorded = reproductions.ok ? reproductions.data.reproductions : [];
  // Reproduced findings, and those no test could replay whose evidence REPRODUCER left standing.
  const fileable = new Set(recorded.filter((entry) => entry.fileable).map((entry) => entry.finding_id));
  const untestable = recorded.filter((entry) => entry.fileable && !entry.reproduced).length;
  // Filed and duplicate findings were handled by an earlier attempt of this run.
  const open = listed.data.findings.filter(
    (finding) => finding.state === "unfiled" || finding.state === "held",
  );
  const chosen = open.filter((finding) =>
    recorded.length > 0 ? fileable.has(finding.id) : finding.state === "unfiled",
  );
  session.log(
    recorded.length > 0
      ? `${fileable.size - untestable} reproduced and ${untestable} untestable on their evidence, of ${recorded.length} reproduction(s) recorded: filing those`
      : "no reproduction recorded in this run: filing findings with evidence at the confidence threshold",
  );
  const findings: DefectEnvelope[] = [];
  for (const finding of chosen) {
    const full = await session.call<DefectEnvelope>("get_finding", { id: finding.id });
    if (full.ok && full.data.reproduction.not_reproducible !== true) findings.push(full.data);
  }
  return findings;
}

/**
 * The ticket the tracker already has for this root cause: one covering any member's fingerprint, or one
 * covering a remembered defect search_similar finds alike. Tickets filed in this run are left out of the
 * similarity match, since this run's own clusters are already known to be different.
 */
async function knownTicket(
  session: PlaybookSession,
  cluster: Cluster,
  filedThisRun: ReadonlySet<string>,
): Promise<Ticket | undefined> {
  const { primary } = cluster;
  const similar = await session.call<{ similar: Array<{ fingerprint: string; score: number }> }>(
    "search_similar",
    {
      title: primary.title,
      location: { kind: primary.location.kind, value: primary.location.value },
      domain: primary.domain,
    },
  );
  const own = [...new Set(cluster.members.map((member) => member.dedupe.fingerprint))];
  const alike = similar.ok
    ? similar.data.similar
        .filter((candidate) => candidate.score >= SAME_DEFECT_SCORE && !own.includes(candidate.fingerprint))
        .map((candidate) => candidate.fingerprint)
    : [];
  for (const [index, fingerprint] of [...own, ...alike].entries()) {
    const found = await session.call<{ tickets: Ticket[] }>("search_issues", { fingerprint });
    if (!found.ok) {
      session.log(`tracker search failed for ${fingerprint}: ${found.error}`);
      continue;
    }
    const ticket = found.data.tickets.find(
      (candidate) => index < own.length || !filedThisRun.has(candidate.key),
    );
    if (ticket) return ticket;
  }
  return undefined;
}

/** A known defect seen again: a comment with its occurrence count, and a reopen if it was closed as fixed. */
async function updateKnown(
  session: PlaybookSession,
  cluster: Cluster,
  ticket: Ticket,
  runId: string,
): Promise<"commented" | "reopened" | undefined> {
  const occurrences = await session.call<{ occurrences: Array<{ runId: string }> }>("get_occurrences", {
    fingerprint: cluster.primary.dedupe.fingerprint,
  });
  const runs = occurrences.ok ? new Set(occurrences.data.occurrences.map((entry) => entry.runId)).size : 0;
  const symptoms = cluster.members.map(
    (member) => `- ${member.title} (${member.location.kind} ${member.location.value})`,
  );
  const seen = `qaas saw this defect again in run ${runId}${runs > 0 ? ` — ${runs} run(s) in all` : ""}.`;
  if (ticket.state === "closed" && ticket.resolution === "fixed") {
    const reopened = await session.call("transition_issue", {
      key: ticket.key,
      to: "open",
      comment: `${seen} It was closed as fixed but still occurs, so it is reopened.\n\n${symptoms.join("\n")}`,
    });
    if (reopened.ok) {
      session.log(`reopened ${ticket.key}: closed as fixed, seen again`);
      return "reopened";
    }
    session.log(`could not reopen ${ticket.key}: ${reopened.error}`);
    return undefined;
  }
  const note =
    ticket.state === "closed"
      ? ` It stays closed (${ticket.resolution ?? "closed"}); a person decided that.`
      : "";
  const commented = await session.call("comment_issue", {
    key: ticket.key,
    text: `${seen}${note}\n\n${symptoms.join("\n")}`,
  });
  if (commented.ok) {
    session.log(`commented on ${ticket.key}: seen again${runs > 0 ? ` (${runs} runs)` : ""}`);
    return "commented";
  }
  session.log(`could not comment on ${ticket.key}: ${commented.error}`);
  return undefined;
}

import { z } from "zod";
import type { DefectEnvelope } from "../../envelope/envelope.ts";
import { SEVERITIES } from "../../envelope/taxonomy.ts";
import { createTracker } from "../../trackers/create-tracker.ts";
import { ticketBody } from "../../trackers/ticket-body.ts";
import type { Ticket, TrackerAdapter } from "../../trackers/tracker.ts";
import type { RunContext, ToolContext } from "../context.ts";
import { err, ok, type ToolResult } from "../result.ts";
import { defineTool } from "../tool.ts";

// The tracker tools: the only way a ticket is filed, found, commented on, moved or linked. Filing is a
// `ticket_create` action, so check() holds it to the agent's policy and the run's ticket cap before the
// tracker is reached, and a defect whose fingerprint already has a ticket is refused: it is never filed
// twice, whoever asks. Every change is a ledger entry.

/** Where the run's adapter is kept; a test may put a fake one here before the first call. */
export const TRACKER_SHARED_KEY = "tracker:adapter";

export function trackerFor(context: RunContext): TrackerAdapter {
  let tracker = context.shared.get(TRACKER_SHARED_KEY) as TrackerAdapter | undefined;
  if (tracker === undefined) {
    tracker = createTracker(context.system.tracker, context.home);
    context.shared.set(TRACKER_SHARED_KEY, tracker);
  }
  return tracker;
}

/** Runs a tracker call; a missing credential or a refusal comes back as the reason, never a throw. */
async function withTracker(
  context: ToolContext,
  use: (tracker: TrackerAdapter) => Promise<ToolResult>,
): Promise<ToolResult> {
  try {
    return await use(trackerFor(context));
  } catch (error) {
    return err(error instanceof Error ? error.message : String(error));
  }
}

function findingsOf(context: ToolContext, ids: readonly string[]): DefectEnvelope[] | string {
  const all = context.readEnvelopes();
  const found: DefectEnvelope[] = [];
  for (const id of ids) {
    const envelope = all.find((candidate) => candidate.id === id);
    if (!envelope) return `no finding ${id} in this run (list_findings shows them)`;
    found.push(envelope);
  }
  return found;
}

const view = (ticket: Ticket) => ({ ...ticket });

const createIssue = defineTool({
  name: "create_issue",
  server: "tracker",
  description:
    "File ONE ticket for one root cause: give every finding id that is a symptom of it (the first is the main one). The ticket lists each symptom with its evidence and reproduction. Refused when any of their fingerprints already has a ticket (comment on that one instead) and over the run's ticket cap.",
  input: z.strictObject({
    finding_ids: z.array(z.string().min(1)).min(1),
    title: z.string().min(1).max(200).optional(),
    severity: z.enum(SEVERITIES).optional(),
    labels: z.array(z.string().min(1).max(50)).optional(),
    note: z.string().optional(),
  }),
  actions: () => [{ kind: "ticket_create" }],
  async run(input, context) {
    const findings = findingsOf(context, [...new Set(input.finding_ids)]);
    if (typeof findings === "string") return err(findings);
    const primary = findings[0]!;
    const fingerprints = [...new Set(findings.map((finding) => finding.dedupe.fingerprint))];
    return withTracker(context, async (tracker) => {
      for (const fingerprint of fingerprints) {
        const [existing] = await tracker.search({ fingerprint, limit: 1 });
        if (existing) {
          return err(
            `${fingerprint} already has ticket ${existing.key} (${existing.state}); comment on it (comment_issue) or reopen it (transition_issue) instead of filing again`,
            { key: existing.key, state: existing.state },
          );
        }
      }
      const severity = input.severity ?? primary.severity;
      const ticket = await tracker.create({
        title: input.title ?? primary.title,
        body: ticketBody(findings, { severity, ...(input.note ? { note: input.note } : {}) }),
        labels: ["qaas", `severity:${severity}`, `class:${primary.defect_class}`, ...(input.labels ?? [])],
        fingerprints,
      });
      for (const finding of findings) {
        const filed = finding === primary;
        context.writeEnvelope({
          ...finding,
          dedupe: { ...finding.dedupe, ...(filed ? {} : { duplicate_of: primary.id }) },
          tracker: { state: filed ? "filed" : "duplicate", key: ticket.key, url: ticket.url },
        });
      }
      context.record(
        "ticket_filed",
        {
          key: ticket.key,
          url: ticket.url,
          tracker: tracker.kind,
          finding_id: primary.id,
          finding_ids: findings.map((finding) => finding.id),
          fingerprints,
          severity,
          title: ticket.title,
        },
        context.agent.name,
      );
      return ok({ key: ticket.key, url: ticket.url, fingerprints });
    });
  },
});

const searchIssues = defineTool({
  name: "search_issues",
  server: "tracker",
  description:
    "Find tickets by the fingerprint they cover (or a finding id of this run, whose fingerprint is used), by labels, or by words of the title. Answers key, state (open/closed), resolution, labels and fingerprints.",
  input: z.strictObject({
    fingerprint: z
      .string()
      .regex(/^fp_[0-9a-f]+$/, "must be a fingerprint such as fp_3f2a…")
      .optional(),
    finding_id: z.string().optional(),
    labels: z.array(z.string().min(1)).optional(),
    text: z.string().min(1).optional(),
    limit: z.number().int().positive().max(100).optional(),
  }),
  async run(input, context) {
    let fingerprint = input.fingerprint;
    if (input.finding_id !== undefined) {
      const findings = findingsOf(context, [input.finding_id]);
      if (typeof findings === "string") return err(findings);
      fingerprint = findings[0]!.dedupe.fingerprint;
    }
    if (fingerprint === undefined && input.labels === undefined && input.text === undefined) {
      return err("give a fingerprint, a finding_id, labels or text to search by");
    }
    return withTracker(context, async (tracker) => {
      const tickets = await tracker.search({
        ...(fingerprint ? { fingerprint } : {}),
        ...(input.labels ? { labels: input.labels } : {}),
        ...(input.text ? { text: input.text } : {}),
        ...(input.limit ? { limit: input.limit } : {}),
      });
      return ok({ tickets: tickets.map(view) });
    });
  },
});

const commentIssue = defineTool({
  name: "comment_issue",
  server: "tracker",
  description:
    "Add a comment to a ticket (a known defect seen again, with its occurrence count), optionally adding labels.",
  input: z.strictObject({
    key: z.string().min(1),
    text: z.string().min(1),
    labels: z.array(z.string().min(1).max(50)).optional(),
  }),
  async run(input, context) {
    return withTracker(context, async (tracker) => {
      await tracker.comment(input.key, input.text);
      if (input.labels?.length) await tracker.addLabels(input.key, input.labels);
      context.record(
        "ticket_updated",
        { key: input.key, action: "comment", tracker: tracker.kind, labels: input.labels ?? [] },
        context.agent.name,
      );
      return ok({ key: input.key, commented: true });
    });
  },
});

const transitionIssue = defineTool({
  name: "transition_issue",
  server: "tracker",
  description:
    "Move a ticket: `open` (reopen), `closed` (with a resolution: fixed, wont_fix, duplicate), or the name of a transition of the tracker's workflow. A comment, when given, is added first so it says why.",
  input: z.strictObject({
    key: z.string().min(1),
    to: z.string().min(1),
    resolution: z.enum(["fixed", "wont_fix", "duplicate", "other"]).optional(),
    comment: z.string().min(1).optional(),
  }),
  async run(input, context) {
    return withTracker(context, async (tracker) => {
      if (input.comment) await tracker.comment(input.key, input.comment);
      const ticket = await tracker.transition(input.key, input.to, input.resolution);
      context.record(
        "ticket_updated",
        {
          key: input.key,
          action: "transition",
          to: input.to,
          state: ticket.state,
          tracker: tracker.kind,
          ...(ticket.resolution ? { resolution: ticket.resolution } : {}),
        },
        context.agent.name,
      );
      return ok(view(ticket));
    });
  },
});

const linkIssues = defineTool({
  name: "link_issues",
  server: "tracker",
  description:
    "Link two tickets: `relates`, `duplicates` (from is a duplicate of to) or `blocks` (from blocks to).",
  input: z.strictObject({
    from: z.string().min(1),
    to: z.string().min(1),
    relation: z.enum(["relates", "duplicates", "blocks"]).default("relates"),
  }),
  async run(input, context) {
    if (input.from === input.to) return err(`a ticket cannot be linked to itself (${input.from})`);
    return withTracker(context, async (tracker) => {
      await tracker.link(input.from, input.to, input.relation);
      context.record(
        "ticket_updated",
        { key: input.from, action: "link", to: input.to, relation: input.relation, tracker: tracker.kind },
        context.agent.name,
      );
      return ok({ linked: true });
    });
  },
});

export const trackerTools = [createIssue, searchIssues, commentIssue, transitionIssue, linkIssues];

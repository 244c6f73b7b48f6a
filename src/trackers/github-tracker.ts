import { Octokit } from "@octokit/rest";
import {
  bodyWithMarkers,
  type CheckItem,
  type LinkRelation,
  markersIn,
  type NewTicket,
  type Resolution,
  reportOf,
  type Ticket,
  type TicketQuery,
  type TrackerAdapter,
  type TrackerCheckReport,
  TrackerError,
  type TransitionTarget,
} from "./tracker.ts";

// GitHub Issues through @octokit/rest. A ticket's key is its issue number. Fingerprints live as marker
// lines in the body and are found with the issue search API (`"fp_…" in:body`); GitHub has no issue
// links, so a link is a cross-reference comment, which GitHub itself shows on both issues.

export interface GithubTrackerOptions {
  owner: string;
  repo: string;
  token: string;
  /** API root; GitHub Enterprise Server is `https://HOST/api/v3`. */
  baseUrl?: string;
}

interface IssueData {
  number: number;
  html_url: string;
  title: string;
  state: string;
  state_reason?: string | null;
  body?: string | null;
  labels: Array<string | { name?: string }>;
  pull_request?: unknown;
}

const STATE_REASON: Record<Resolution, "completed" | "not_planned" | "duplicate"> = {
  fixed: "completed",
  wont_fix: "not_planned",
  duplicate: "duplicate",
  other: "not_planned",
};

const RELATION_WORDS: Record<LinkRelation, string> = {
  relates: "Related to",
  duplicates: "Duplicate of",
  blocks: "Blocks",
};

export class GithubTracker implements TrackerAdapter {
  readonly kind = "github" as const;
  readonly target: string;
  readonly #octokit: Octokit;
  readonly #where: { owner: string; repo: string };

  constructor(options: GithubTrackerOptions) {
    this.#where = { owner: options.owner, repo: options.repo };
    this.target = `${options.owner}/${options.repo}`;
    this.#octokit = new Octokit({
      auth: options.token,
      userAgent: "qaas",
      ...(options.baseUrl ? { baseUrl: options.baseUrl.replace(/\/+$/, "") } : {}),
      // Octokit logs every failed request to the console; the adapter reports failures itself.
      log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    });
  }

  async create(ticket: NewTicket): Promise<Ticket> {
    const { data } = await this.#call("create an issue", () =>
      this.#octokit.issues.create({
        ...this.#where,
        title: ticket.title,
        body: bodyWithMarkers(ticket.body, ticket.fingerprints),
        labels: [...new Set(ticket.labels)],
      }),
    );
    return toTicket(data as IssueData);
  }

  async get(key: string): Promise<Ticket> {
    const issue_number = issueNumber(key);
    const { data } = await this.#call(`read issue #${issue_number}`, () =>
      this.#octokit.issues.get({ ...this.#where, issue_number }),
    );
    return toTicket(data as IssueData);
  }

  async search(query: TicketQuery): Promise<Ticket[]> {
    const terms = [`repo:${this.target}`, "is:issue"];
    if (query.fingerprint !== undefined) terms.push(`"${query.fingerprint}" in:body`);
    for (const label of query.labels ?? []) terms.push(`label:"${label.replaceAll('"', "")}"`);
    if (query.text !== undefined) terms.push(`"${query.text.replaceAll('"', "")}" in:title`);
    const { data } = await this.#call("search issues", () =>
      this.#octokit.search.issuesAndPullRequests({ q: terms.join(" "), per_page: query.limit ?? 50 }),
    );
    return (data.items as IssueData[])
      .filter((item) => item.pull_request === undefined)
      .map(toTicket)
      .filter((ticket) => query.fingerprint === undefined || ticket.fingerprints.includes(query.fingerprint));
  }

  async comment(key: string, text: string): Promise<void> {
    const issue_number = issueNumber(key);
    await this.#call(`comment on issue #${issue_number}`, () =>
      this.#octokit.issues.createComment({ ...this.#where, issue_number, body: text }),
    );
  }

  async transition(key: string, to: TransitionTarget, resolution?: Resolution): Promise<Ticket> {
    const issue_number = issueNumber(key);
    const word = to.trim().toLowerCase();
    const opening = word === "open" || word === "reopen" || word === "reopened";
    if (!opening && word !== "closed" && word !== "close") {
      throw new TrackerError(
        `github: an issue is only open or closed; "${to}" is neither (use open or closed)`,
      );
    }
    const { data } = await this.#call(`${opening ? "reopen" : "close"} issue #${issue_number}`, () =>
      this.#octokit.issues.update({
        ...this.#where,
        issue_number,
        state: opening ? "open" : "closed",
        state_reason: opening ? "reopened" : STATE_REASON[resolution ?? "fixed"],
      }),
    );
    return toTicket(data as IssueData);
  }

  async addLabels(key: string, labels: string[]): Promise<void> {
    const issue_number = issueNumber(key);
    await this.#call(`label issue #${issue_number}`, () =>
      this.#octokit.issues.addLabels({ ...this.#where, issue_number, labels }),
    );
  }

  async link(from: string, to: string, relation: LinkRelation): Promise<void> {
    await this.comment(from, `${RELATION_WORDS[relation]} #${issueNumber(to)}`);
  }

  async check(): Promise<TrackerCheckReport> {
    const checks: CheckItem[] = [];
    try {
      const { data } = await this.#octokit.users.getAuthenticated();
      checks.push({ name: "credentials", ok: true, detail: `signed in as ${data.login}` });
    } catch (error) {
      checks.push({ name: "credentials", ok: false, detail: `the token was refused: ${describe(error)}` });
      return reportOf(this.kind, this.target, checks);
    }
    let repository: { has_issues?: boolean; permissions?: Record<string, boolean | undefined> };
    try {
      ({ data: repository } = await this.#octokit.repos.get(this.#where));
    } catch (error) {
      checks.push({
        name: "project",
        ok: false,
        detail: `repository ${this.target} cannot be read: ${describe(error)}; check tracker.github.owner and repo`,
      });
      return reportOf(this.kind, this.target, checks);
    }
    if (repository.has_issues === false) {
      checks.push({
        name: "project",
        ok: false,
        detail: `${this.target} has issues turned off; enable them`,
      });
      return reportOf(this.kind, this.target, checks);
    }
    checks.push({ name: "project", ok: true, detail: `${this.target} has issues enabled` });
    // The repository answer carries the caller's role; opening and commenting need read, closing,
    // reopening and labelling need triage (or more).
    const granted = repository.permissions ?? {};
    const reads = Boolean(
      granted.pull || granted.triage || granted.push || granted.maintain || granted.admin,
    );
    const triages = Boolean(granted.triage || granted.push || granted.maintain || granted.admin);
    const role = (ok: boolean, needs: string) =>
      ok ? `granted (${needs})` : `missing: needs the ${needs} role on ${this.target}`;
    checks.push({ name: "create", ok: reads, detail: role(reads, "read") });
    checks.push({ name: "comment", ok: reads, detail: role(reads, "read") });
    checks.push({ name: "transition", ok: triages, detail: role(triages, "triage") });
    checks.push({ name: "labels", ok: triages, detail: role(triages, "triage") });
    return reportOf(this.kind, this.target, checks);
  }

  async #call<Result>(what: string, request: () => Promise<Result>): Promise<Result> {
    try {
      return await request();
    } catch (error) {
      throw new TrackerError(`github ${this.target}: could not ${what}: ${describe(error)}`, statusOf(error));
    }
  }
}

function toTicket(issue: IssueData): Ticket {
  const closed = issue.state === "closed";
  return {
    key: String(issue.number),
    url: issue.html_url,
    title: issue.title,
    state: closed ? "closed" : "open",
    ...(closed ? { resolution: resolutionOf(issue.state_reason) } : {}),
    labels: issue.labels
      .map((label) => (typeof label === "string" ? label : (label.name ?? "")))
      .filter((label) => label !== ""),
    fingerprints: markersIn(issue.body),
  };
}

function resolutionOf(reason: string | null | undefined): Resolution {
  if (reason === "completed") return "fixed";
  if (reason === "not_planned") return "wont_fix";
  if (reason === "duplicate") return "duplicate";
  return "other";
}

function issueNumber(key: string): number {
  const match = /^#?(\d+)$/.exec(key.trim());
  if (!match) throw new TrackerError(`github: "${key}" is not an issue number (e.g. 12 or #12)`);
  return Number(match[1]);
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown })?.status;
  return typeof status === "number" ? status : undefined;
}

function describe(error: unknown): string {
  const status = statusOf(error);
  const message = error instanceof Error ? error.message : String(error);
  if (status === 401) return `401 unauthorised (${message}): check the token`;
  if (status === 403) return `403 forbidden (${message}): the token lacks a permission`;
  if (status === 404) return `404 not found (${message})`;
  return status === undefined ? message : `${status} ${message}`;
}

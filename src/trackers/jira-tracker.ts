import { Version3Client } from "jira.js";
import {
  bodyWithMarkers,
  type CheckItem,
  fingerprintLabel,
  type LinkRelation,
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

// Jira Cloud through jira.js (REST API v3). Fingerprints are labels (`qaas-fp_…`) because JQL matches
// labels exactly, where its text search tokenises; they are also written into the description for people.
// Transitions are found by name in the issue's own workflow, never by hard-coded ids.

export interface JiraTrackerOptions {
  /** The site, e.g. `https://example.atlassian.net`. */
  baseUrl: string;
  project: string;
  email: string;
  token: string;
  issueType: string;
}

const FIELDS = ["summary", "status", "resolution", "labels"];
const PERMISSIONS = {
  create: "CREATE_ISSUES",
  comment: "ADD_COMMENTS",
  transition: "TRANSITION_ISSUES",
  labels: "EDIT_ISSUES",
  link: "LINK_ISSUES",
} as const;
const LINK_TYPES: Record<LinkRelation, string> = {
  relates: "Relates",
  duplicates: "Duplicate",
  blocks: "Blocks",
};

interface IssueFields {
  summary?: string;
  status?: { name?: string; statusCategory?: { key?: string } };
  resolution?: { name?: string } | null;
  labels?: string[];
}

export class JiraTracker implements TrackerAdapter {
  readonly kind = "jira" as const;
  readonly target: string;
  readonly #client: Version3Client;
  readonly #options: JiraTrackerOptions;

  constructor(options: JiraTrackerOptions) {
    this.#options = { ...options, baseUrl: options.baseUrl.replace(/\/+$/, "") };
    this.target = `${this.#options.baseUrl} project ${options.project}`;
    this.#client = new Version3Client({
      host: this.#options.baseUrl,
      authentication: { basic: { email: options.email, apiToken: options.token } },
    });
  }

  async create(ticket: NewTicket): Promise<Ticket> {
    const labels = [...new Set([...ticket.labels, ...ticket.fingerprints.map(fingerprintLabel)])];
    const created = await this.#call("create an issue", () =>
      this.#client.issues.createIssue({
        fields: {
          project: { key: this.#options.project },
          issuetype: { name: this.#options.issueType },
          summary: ticket.title,
          description: documentOf(bodyWithMarkers(ticket.body, ticket.fingerprints)),
          labels,
        },
      }),
    );
    return {
      key: created.key,
      url: this.#browse(created.key),
      title: ticket.title,
      state: "open",
      labels,
      fingerprints: [...new Set(ticket.fingerprints)],
    };
  }

  async get(key: string): Promise<Ticket> {
    const issue = await this.#call(`read ${key}`, () =>
      this.#client.issues.getIssue({ issueIdOrKey: key, fields: FIELDS }),
    );
    return this.#toTicket(issue.key, issue.fields as IssueFields);
  }

  async search(query: TicketQuery): Promise<Ticket[]> {
    const clauses = [`project = ${quoteJql(this.#options.project)}`];
    if (query.fingerprint !== undefined)
      clauses.push(`labels = ${quoteJql(fingerprintLabel(query.fingerprint))}`);
    for (const label of query.labels ?? []) clauses.push(`labels = ${quoteJql(label)}`);
    if (query.text !== undefined) clauses.push(`summary ~ ${quoteJql(query.text)}`);
    const found = await this.#call("search issues", () =>
      this.#client.issueSearch.searchForIssuesUsingJqlEnhancedSearchPost({
        jql: `${clauses.join(" AND ")} ORDER BY created DESC`,
        maxResults: query.limit ?? 50,
        fields: FIELDS,
      }),
    );
    return (found.issues ?? []).map((issue) => this.#toTicket(issue.key ?? "", issue.fields as IssueFields));
  }

  async comment(key: string, text: string): Promise<void> {
    await this.#call(`comment on ${key}`, () =>
      this.#client.issueComments.addComment({ issueIdOrKey: key, comment: documentOf(text) }),
    );
  }

  async transition(key: string, to: TransitionTarget, _resolution?: Resolution): Promise<Ticket> {
    const { transitions = [] } = await this.#call(`read the transitions of ${key}`, () =>
      this.#client.issues.getTransitions({ issueIdOrKey: key }),
    );
    const wanted = to.trim().toLowerCase();
    const category = (candidate: (typeof transitions)[number]) => candidate.to?.statusCategory?.key;
    const named = (candidate: (typeof transitions)[number]) =>
      candidate.name?.toLowerCase() === wanted || candidate.to?.name?.toLowerCase() === wanted;
    // `open` and `closed` are qaas's words: any transition into (or out of) the done category will do,
    // preferring one whose name says so.
    const chosen =
      transitions.find(named) ??
      (wanted === "open" || wanted === "reopen"
        ? (transitions.find(
            (candidate) => /reopen/i.test(candidate.name ?? "") && category(candidate) !== "done",
          ) ??
          transitions.find(
            (candidate) => category(candidate) !== undefined && category(candidate) !== "done",
          ))
        : wanted === "closed" || wanted === "close"
          ? (transitions.find(
              (candidate) =>
                /done|close|resolve/i.test(candidate.name ?? "") && category(candidate) === "done",
            ) ?? transitions.find((candidate) => category(candidate) === "done"))
          : undefined);
    if (chosen?.id === undefined) {
      const available = transitions.map((candidate) => `${candidate.name} (→ ${candidate.to?.name ?? "?"})`);
      throw new TrackerError(
        `jira: ${key} has no transition "${to}" from its current status; available: ${available.join(", ") || "none"}`,
      );
    }
    await this.#call(`move ${key} through "${chosen.name}"`, () =>
      this.#client.issues.doTransition({ issueIdOrKey: key, transition: { id: chosen.id } }),
    );
    return this.get(key);
  }

  async addLabels(key: string, labels: string[]): Promise<void> {
    await this.#call(`label ${key}`, () =>
      this.#client.issues.editIssue({
        issueIdOrKey: key,
        update: { labels: labels.map((label) => ({ add: label })) },
      }),
    );
  }

  async link(from: string, to: string, relation: LinkRelation): Promise<void> {
    await this.#call(`link ${from} to ${to}`, () =>
      this.#client.issueLinks.linkIssues({
        type: { name: LINK_TYPES[relation] },
        outwardIssue: { key: from },
        inwardIssue: { key: to },
      }),
    );
  }

  async check(): Promise<TrackerCheckReport> {
    const checks: CheckItem[] = [];
    const report = () => reportOf(this.kind, this.target, checks);
    try {
      const me = await this.#client.myself.getCurrentUser();
      checks.push({
        name: "credentials",
        ok: true,
        detail: `signed in as ${me.displayName ?? me.accountId}`,
      });
    } catch (error) {
      checks.push({
        name: "credentials",
        ok: false,
        detail: `the email and token were refused: ${describe(error)}`,
      });
      return report();
    }
    try {
      const project = await this.#client.projects.getProject({ projectIdOrKey: this.#options.project });
      const types = (project.issueTypes ?? []).map((type) => type.name ?? "");
      const known = types.some((name) => name.toLowerCase() === this.#options.issueType.toLowerCase());
      checks.push(
        known || types.length === 0
          ? {
              name: "project",
              ok: true,
              detail: `project ${project.key} (${project.name}) takes ${this.#options.issueType}`,
            }
          : {
              name: "project",
              ok: false,
              detail: `project ${project.key} has no issue type "${this.#options.issueType}"; set tracker.jira.issue_type to one of: ${types.join(", ")}`,
            },
      );
    } catch (error) {
      checks.push({
        name: "project",
        ok: false,
        detail: `project ${this.#options.project} cannot be read: ${describe(error)}; check tracker.jira.project`,
      });
      return report();
    }
    try {
      const mine = await this.#client.permissions.getMyPermissions({
        projectKey: this.#options.project,
        permissions: Object.values(PERMISSIONS).join(","),
      });
      for (const [name, permission] of Object.entries(PERMISSIONS) as Array<[CheckItem["name"], string]>) {
        const granted =
          (mine.permissions as Record<string, { havePermission?: boolean }> | undefined)?.[permission]
            ?.havePermission === true;
        checks.push({
          name,
          ok: granted,
          detail: granted
            ? `${permission} granted`
            : `missing: ${permission} in project ${this.#options.project}`,
        });
      }
    } catch (error) {
      checks.push({ name: "create", ok: false, detail: `permissions cannot be read: ${describe(error)}` });
    }
    return report();
  }

  #toTicket(key: string, fields: IssueFields): Ticket {
    const closed = fields.status?.statusCategory?.key === "done";
    const labels = fields.labels ?? [];
    return {
      key,
      url: this.#browse(key),
      title: fields.summary ?? "",
      state: closed ? "closed" : "open",
      ...(closed ? { resolution: resolutionOf(fields.resolution?.name) } : {}),
      labels,
      fingerprints: labels.filter((label) => label.startsWith("qaas-fp_")).map((label) => label.slice(5)),
    };
  }

  #browse(key: string): string {
    return `${this.#options.baseUrl}/browse/${key}`;
  }

  async #call<Result>(what: string, request: () => Promise<Result>): Promise<Result> {
    try {
      return await request();
    } catch (error) {
      throw new TrackerError(`jira ${this.target}: could not ${what}: ${describe(error)}`, statusOf(error));
    }
  }
}

function resolutionOf(name: string | undefined): Resolution {
  const value = (name ?? "").toLowerCase();
  if (/duplicate/.test(value)) return "duplicate";
  if (/won'?t|not planned|declined|cannot|invalid/.test(value)) return "wont_fix";
  if (/done|fixed|resolved|complete/.test(value)) return "fixed";
  return "other";
}

/** Markdown-ish text as an Atlassian document: one paragraph per block, line breaks kept. */
function documentOf(text: string) {
  const blocks = text.split(/\n\s*\n/).filter((block) => block.trim() !== "");
  return {
    type: "doc" as const,
    version: 1 as const,
    content: blocks.map((block) => ({
      type: "paragraph" as const,
      content: block
        .split("\n")
        .flatMap((line, index) => [
          ...(index > 0 ? [{ type: "hardBreak" as const }] : []),
          ...(line === "" ? [] : [{ type: "text" as const, text: line }]),
        ]),
    })),
  };
}

function quoteJql(value: string): string {
  return `"${value.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown })?.status;
  return typeof status === "number" ? status : undefined;
}

function describe(error: unknown): string {
  const status = statusOf(error);
  const data = (
    error as { response?: { data?: { errorMessages?: string[]; errors?: Record<string, string> } } }
  )?.response?.data;
  const detail = [
    ...(data?.errorMessages ?? []),
    ...Object.entries(data?.errors ?? {}).map(([field, message]) => `${field}: ${message}`),
  ];
  const message =
    detail.length > 0 ? detail.join("; ") : error instanceof Error ? error.message : String(error);
  if (status === 401) return `401 unauthorised (${message}): check the email and API token`;
  if (status === 403) return `403 forbidden (${message}): the account lacks a permission`;
  return status === undefined ? message : `${status} ${message}`;
}

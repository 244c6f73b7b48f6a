import { type FakeServer, type Reply, type SeenRequest, startFakeServer } from "./fake-server.ts";

// A local stand-in for the GitHub REST API, speaking the documented paths and payloads of the calls the
// adapter makes: GET /user, GET /repos/{o}/{r}, POST/GET/PATCH issues, comments, labels, GET /search/issues.

export const GITHUB_TOKEN = "ghp_fake_token_for_tests";

interface FakeIssue {
  number: number;
  title: string;
  body: string;
  state: "open" | "closed";
  state_reason: string | null;
  labels: string[];
  comments: string[];
}

export interface FakeGithub extends FakeServer {
  issues: Map<number, FakeIssue>;
  permissions: Record<string, boolean>;
}

export async function startFakeGithub(owner = "acme", repo = "shop"): Promise<FakeGithub> {
  const issues = new Map<number, FakeIssue>();
  const permissions: Record<string, boolean> = {
    admin: false,
    maintain: false,
    push: false,
    triage: true,
    pull: true,
  };
  const base = `/repos/${owner}/${repo}`;
  const view = (issue: FakeIssue) => ({
    number: issue.number,
    html_url: `https://github.example/${owner}/${repo}/issues/${issue.number}`,
    title: issue.title,
    body: issue.body,
    state: issue.state,
    state_reason: issue.state_reason,
    labels: issue.labels.map((name) => ({ name })),
  });
  const route = (request: SeenRequest): Reply => {
    const authorization = String(request.headers.authorization ?? "");
    if (!authorization.endsWith(GITHUB_TOKEN)) return { status: 401, body: { message: "Bad credentials" } };
    const body = (request.body ?? {}) as Record<string, unknown>;
    if (request.method === "GET" && request.path === "/user")
      return { status: 200, body: { login: "qaas-bot" } };
    if (request.method === "GET" && request.path === base) {
      return { status: 200, body: { full_name: `${owner}/${repo}`, has_issues: true, permissions } };
    }
    if (request.method === "POST" && request.path === `${base}/issues`) {
      const issue: FakeIssue = {
        number: issues.size + 1,
        title: String(body.title),
        body: String(body.body ?? ""),
        state: "open",
        state_reason: null,
        labels: (body.labels as string[] | undefined) ?? [],
        comments: [],
      };
      issues.set(issue.number, issue);
      return { status: 201, body: view(issue) };
    }
    if (request.method === "GET" && request.path === "/search/issues") {
      const q = request.query.get("q") ?? "";
      const phrases = [...q.matchAll(/"([^"]+)" in:body/g)].map((match) => match[1]!);
      const labels = [...q.matchAll(/label:"([^"]+)"/g)].map((match) => match[1]!);
      const items = [...issues.values()].filter(
        (issue) =>
          phrases.every((phrase) => issue.body.includes(phrase)) &&
          labels.every((label) => issue.labels.includes(label)),
      );
      return {
        status: 200,
        body: { total_count: items.length, incomplete_results: false, items: items.map(view) },
      };
    }
    const match = new RegExp(`^${base}/issues/(\\d+)(/comments|/labels)?$`).exec(request.path);
    const issue = match ? issues.get(Number(match[1])) : undefined;
    if (!match || !issue) return { status: 404, body: { message: "Not Found" } };
    const writes = permissions.triage || permissions.push || permissions.admin;
    if (match[2] === "/comments" && request.method === "POST") {
      issue.comments.push(String(body.body));
      return { status: 201, body: { id: issue.comments.length, body: body.body } };
    }
    if (match[2] === "/labels" && request.method === "POST") {
      if (!writes) return { status: 403, body: { message: "Must have triage access" } };
      issue.labels = [...new Set([...issue.labels, ...(body.labels as string[])])];
      return { status: 200, body: issue.labels.map((name) => ({ name })) };
    }
    if (match[2] === undefined && request.method === "GET") return { status: 200, body: view(issue) };
    if (match[2] === undefined && request.method === "PATCH") {
      if (!writes) return { status: 403, body: { message: "Must have triage access" } };
      if (body.state === "open" || body.state === "closed") issue.state = body.state;
      issue.state_reason = (body.state_reason as string | undefined) ?? null;
      return { status: 200, body: view(issue) };
    }
    return { status: 404, body: { message: "Not Found" } };
  };
  const server = await startFakeServer(route);
  return Object.assign(server, { issues, permissions });
}

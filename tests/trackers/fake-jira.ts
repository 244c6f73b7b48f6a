import { type FakeServer, type Reply, type SeenRequest, startFakeServer } from "./fake-server.ts";

// A local stand-in for Jira Cloud REST API v3, with the paths and payloads jira.js 5.4 sends:
// /myself, /project/{key}, /mypermissions, /issue, /issue/{key}, /issue/{key}/comment,
// /issue/{key}/transitions, /search/jql (POST) and /issueLink.

export const JIRA_EMAIL = "bot@example.com";
export const JIRA_TOKEN = "jira-fake-token";

interface FakeIssue {
  key: string;
  summary: string;
  description: unknown;
  labels: string[];
  status: "To Do" | "Done";
  resolution: string | null;
  comments: unknown[];
}

export interface FakeJira extends FakeServer {
  issues: Map<string, FakeIssue>;
  /** Permission key → granted; a key set to false is reported as not held. */
  permissions: Record<string, boolean>;
  links: Array<{ type: string; inward: string; outward: string }>;
}

export async function startFakeJira(project = "QA"): Promise<FakeJira> {
  const issues = new Map<string, FakeIssue>();
  const links: FakeJira["links"] = [];
  const permissions: Record<string, boolean> = {
    CREATE_ISSUES: true,
    ADD_COMMENTS: true,
    TRANSITION_ISSUES: true,
    EDIT_ISSUES: true,
    LINK_ISSUES: true,
  };
  const expected = `Basic ${Buffer.from(`${JIRA_EMAIL}:${JIRA_TOKEN}`).toString("base64")}`;
  const fields = (issue: FakeIssue) => ({
    summary: issue.summary,
    labels: issue.labels,
    status: { name: issue.status, statusCategory: { key: issue.status === "Done" ? "done" : "new" } },
    resolution: issue.resolution ? { name: issue.resolution } : null,
  });
  const route = (request: SeenRequest): Reply => {
    if (request.headers.authorization !== expected) {
      return {
        status: 401,
        body: { errorMessages: ["Client must be authenticated to access this resource."] },
      };
    }
    // biome-ignore lint/suspicious/noExplicitAny: the fake reads whatever shape the client sent.
    const body = (request.body ?? {}) as Record<string, any>;
    const api = "/rest/api/3";
    if (request.method === "GET" && request.path === `${api}/myself`) {
      return { status: 200, body: { accountId: "5b10a", displayName: "QA Bot" } };
    }
    if (request.method === "GET" && request.path.startsWith(`${api}/project/`)) {
      const key = request.path.slice(`${api}/project/`.length);
      if (key !== project)
        return { status: 404, body: { errorMessages: [`No project could be found with key '${key}'.`] } };
      return { status: 200, body: { key, name: "Quality", issueTypes: [{ name: "Bug" }, { name: "Task" }] } };
    }
    if (request.method === "GET" && request.path === `${api}/mypermissions`) {
      const asked = (request.query.get("permissions") ?? "").split(",");
      return {
        status: 200,
        body: {
          permissions: Object.fromEntries(
            asked.map((key) => [key, { key, havePermission: permissions[key] ?? false }]),
          ),
        },
      };
    }
    if (request.method === "POST" && request.path === `${api}/issue`) {
      if (!permissions.CREATE_ISSUES) return { status: 403, body: { errorMessages: ["no permission"] } };
      const key = `${project}-${issues.size + 1}`;
      issues.set(key, {
        key,
        summary: body.fields.summary,
        description: body.fields.description,
        labels: body.fields.labels ?? [],
        status: "To Do",
        resolution: null,
        comments: [],
      });
      return { status: 201, body: { id: String(10000 + issues.size), key, self: `${api}/issue/${key}` } };
    }
    if (request.method === "POST" && request.path === `${api}/search/jql`) {
      const jql = String(body.jql);
      const labels = [...jql.matchAll(/labels = "([^"]+)"/g)].map((match) => match[1]!);
      const found = [...issues.values()].filter((issue) =>
        labels.every((label) => issue.labels.includes(label)),
      );
      return {
        status: 200,
        body: { issues: found.map((issue) => ({ key: issue.key, fields: fields(issue) })), isLast: true },
      };
    }
    if (request.method === "POST" && request.path === `${api}/issueLink`) {
      links.push({ type: body.type.name, inward: body.inwardIssue.key, outward: body.outwardIssue.key });
      return { status: 201 };
    }
    const match = new RegExp(`^${api}/issue/([A-Z]+-\\d+)(/comment|/transitions)?$`).exec(request.path);
    const issue = match ? issues.get(match[1]!) : undefined;
    if (!match || !issue) return { status: 404, body: { errorMessages: ["Issue does not exist"] } };
    if (match[2] === "/comment" && request.method === "POST") {
      issue.comments.push(body.body);
      return { status: 201, body: { id: String(issue.comments.length) } };
    }
    const transitions =
      issue.status === "Done"
        ? [{ id: "31", name: "Reopen", to: { name: "To Do", statusCategory: { key: "new" } } }]
        : [{ id: "21", name: "Done", to: { name: "Done", statusCategory: { key: "done" } } }];
    if (match[2] === "/transitions" && request.method === "GET")
      return { status: 200, body: { transitions } };
    if (match[2] === "/transitions" && request.method === "POST") {
      const chosen = transitions.find((transition) => transition.id === body.transition?.id);
      if (!chosen) return { status: 400, body: { errorMessages: ["Transition id is not valid"] } };
      issue.status = chosen.to.name as FakeIssue["status"];
      issue.resolution = issue.status === "Done" ? "Done" : null;
      return { status: 204 };
    }
    if (match[2] === undefined && request.method === "GET") {
      return { status: 200, body: { key: issue.key, fields: fields(issue) } };
    }
    if (match[2] === undefined && request.method === "PUT") {
      for (const change of body.update?.labels ?? []) if (change.add) issue.labels.push(change.add);
      return { status: 204 };
    }
    return { status: 404, body: { errorMessages: ["not found"] } };
  };
  const server = await startFakeServer(route);
  return Object.assign(server, { issues, permissions, links });
}

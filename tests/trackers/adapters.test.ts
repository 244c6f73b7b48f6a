import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { GithubTracker } from "../../src/trackers/github-tracker.ts";
import { JiraTracker } from "../../src/trackers/jira-tracker.ts";
import { LocalTracker } from "../../src/trackers/local-tracker.ts";
import type { TrackerAdapter } from "../../src/trackers/tracker.ts";
import { GITHUB_TOKEN, startFakeGithub } from "./fake-github.ts";
import { JIRA_EMAIL, JIRA_TOKEN, startFakeJira } from "./fake-jira.ts";
import type { FakeServer } from "./fake-server.ts";

const servers: FakeServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const FP_A = "fp_aaaaaaaaaaaaaaaaaaaaaaaa";
const FP_B = "fp_bbbbbbbbbbbbbbbbbbbbbbbb";

/** The life of one ticket, the same on every backend: file, find by fingerprint, comment, close, reopen. */
async function lifecycle(tracker: TrackerAdapter) {
  const created = await tracker.create({
    title: "Duplicate emails accepted",
    body: "Three symptoms of one missing constraint.",
    labels: ["qaas", "severity:high"],
    fingerprints: [FP_A, FP_B],
  });
  expect(created).toMatchObject({ state: "open", title: "Duplicate emails accepted" });
  expect(created.fingerprints).toEqual([FP_A, FP_B]);

  const byFingerprint = await tracker.search({ fingerprint: FP_B });
  expect(byFingerprint.map((ticket) => ticket.key)).toEqual([created.key]);
  expect(await tracker.search({ fingerprint: "fp_cccccccccccccccccccccccc" })).toEqual([]);
  expect((await tracker.search({ labels: ["severity:high"] })).map((ticket) => ticket.key)).toEqual([
    created.key,
  ]);

  await tracker.comment(created.key, "Seen again in run r2 (2 runs in all).");
  await tracker.addLabels(created.key, ["recurring"]);
  const closed = await tracker.transition(created.key, "closed", "fixed");
  expect(closed).toMatchObject({ state: "closed", resolution: "fixed" });
  const reopened = await tracker.transition(created.key, "open");
  expect(reopened.state).toBe("open");
  expect((await tracker.get(created.key)).labels).toContain("recurring");

  const other = await tracker.create({ title: "Other", body: "b", labels: [], fingerprints: [] });
  await tracker.link(other.key, created.key, "relates");
  return { created, other };
}

describe("tracker adapters", () => {
  it("local: one Markdown file per ticket plus a JSON index, under the qaas home", async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-local-tracker-"));
    const tracker = new LocalTracker(home);
    const { created } = await lifecycle(tracker);
    const markdown = fs.readFileSync(path.join(home, "tickets", `${created.key}.md`), "utf8");
    expect(markdown).toContain(`# ${created.key}: Duplicate emails accepted`);
    expect(markdown).toContain(`qaas-fingerprint: ${FP_A}`);
    expect(markdown).toMatch(/comment: Seen again in run r2/);
    expect(markdown).toMatch(/closed \(fixed\)/);
    expect(markdown).toMatch(/^state: open/m);
    const index = JSON.parse(fs.readFileSync(path.join(home, "tickets", "index.json"), "utf8"));
    expect(Object.keys(index.tickets)).toEqual(["QA-1", "QA-2"]);
    expect(index.tickets["QA-2"].links).toEqual([{ to: "QA-1", relation: "relates" }]);
    await expect(tracker.transition("QA-1", "sideways")).rejects.toThrow(/no transition "sideways"/);
    await expect(tracker.comment("QA-9", "x")).rejects.toThrow(/no ticket QA-9/);
    expect((await tracker.check()).ok).toBe(true);
  });

  it("github: issues, search by the fingerprint marker in the body, comments, state and labels", async () => {
    const github = await startFakeGithub();
    servers.push(github);
    const tracker = new GithubTracker({
      owner: "acme",
      repo: "shop",
      token: GITHUB_TOKEN,
      baseUrl: github.url,
    });
    const { created, other } = await lifecycle(tracker);
    const issue = github.issues.get(Number(created.key))!;
    expect(issue.body).toContain(`qaas-fingerprint: ${FP_B}`);
    expect(issue.comments).toEqual(["Seen again in run r2 (2 runs in all)."]);
    expect(github.issues.get(Number(other.key))!.comments).toEqual([`Related to #${created.key}`]);
    const search = github.requests.find((request) => request.path === "/search/issues")!;
    expect(search.query.get("q")).toBe(`repo:acme/shop is:issue "${FP_B}" in:body`);
    const patches = github.requests
      .filter((request) => request.method === "PATCH")
      .map((request) => request.body);
    expect(patches).toEqual([
      { state: "closed", state_reason: "completed" },
      { state: "open", state_reason: "reopened" },
    ]);
  });

  it("github: a refused token is reported with its status, not as a crash", async () => {
    const github = await startFakeGithub();
    servers.push(github);
    const tracker = new GithubTracker({ owner: "acme", repo: "shop", token: "wrong", baseUrl: github.url });
    await expect(tracker.create({ title: "t", body: "b", labels: [], fingerprints: [] })).rejects.toThrow(
      /github acme\/shop: could not create an issue: 401 unauthorised/,
    );
  });

  it("jira: issues with fingerprint labels, JQL search, comments, transitions by name, labels and links", async () => {
    const jira = await startFakeJira();
    servers.push(jira);
    const tracker = new JiraTracker({
      baseUrl: jira.url,
      project: "QA",
      email: JIRA_EMAIL,
      token: JIRA_TOKEN,
      issueType: "Bug",
    });
    const { created, other } = await lifecycle(tracker);
    expect(created.key).toBe("QA-1");
    expect(created.url).toBe(`${jira.url}/browse/QA-1`);
    const issue = jira.issues.get("QA-1")!;
    expect(issue.labels).toEqual(
      expect.arrayContaining(["qaas", `qaas-${FP_A}`, `qaas-${FP_B}`, "recurring"]),
    );
    expect(JSON.stringify(issue.description)).toContain(`qaas-fingerprint: ${FP_A}`);
    expect(issue.comments).toHaveLength(1);
    expect(jira.links).toEqual([{ type: "Relates", outward: other.key, inward: "QA-1" }]);
    const search = jira.requests.find((request) => request.path === "/rest/api/3/search/jql")!;
    expect(search.method).toBe("POST");
    expect((search.body as { jql: string }).jql).toBe(
      `project = "QA" AND labels = "qaas-${FP_B}" ORDER BY created DESC`,
    );
    const moves = jira.requests
      .filter((request) => request.method === "POST" && request.path.endsWith("/transitions"))
      .map((request) => request.body);
    expect(moves).toEqual([{ transition: { id: "21" } }, { transition: { id: "31" } }]);
    await expect(tracker.transition("QA-1", "In Review")).rejects.toThrow(
      /QA-1 has no transition "In Review" from its current status; available: Done \(→ Done\)/,
    );
  });
});

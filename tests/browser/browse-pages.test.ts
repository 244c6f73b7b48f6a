import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import type { BrowseStats } from "../../src/probes/browser/browse-pages.ts";
import { browsePages } from "../../src/probes/browser/browse-pages.ts";
import { closeRunServices } from "../../src/tools/run-end.ts";
import { isOwnAssertion } from "../../src/tools/testing/finding-test.ts";
import { parseTap } from "../../src/tools/testing/test-results.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";
import type { FixtureSite } from "./fixture-site.ts";
import { anonymousPagesContext, PAGES, startFixtureSite } from "./fixture-site.ts";

// browse_pages over a site where every check has a defective page and a safe look-alike: one pass as
// anonymous on a target that does not allow writes; the findings must be exactly the defective pages'.

let site: FixtureSite;
let context: FakeRunContext;
let candidates: EnvelopeDraft[];
let stats: BrowseStats;

beforeAll(async () => {
  site = await startFixtureSite();
  context = anonymousPagesContext("site", site.baseUrl, [...PAGES, "/moved"]);
  const answer = await browsePages(context, { max_seconds: 150 });
  if (typeof answer === "string") throw new Error(answer);
  ({ candidates, stats } = answer);
}, 180_000);

afterAll(async () => {
  await closeRunServices(context);
  await site.close();
});

const found = (defectClass: string): string[] =>
  candidates
    .filter((draft) => draft.defect_class === defectClass)
    .map((draft) => `${draft.location.value} ${draft.dedupe?.discriminator ?? ""}`.trim())
    .sort();

describe("browse_pages", () => {
  it("visits every mapped page template once as anonymous, leaving a page that redirects elsewhere", () => {
    expect(stats.roles.map((role) => [role.role, role.pages, role.skipped])).toEqual([
      ["anonymous", PAGES.length + 1, ["/moved: redirected to /about"]],
    ]);
    // Once at desktop width, once at phone width (no candidate there: no confirming load).
    expect(site.hits.get("GET /console-ok")).toBe(2);
  });

  it("reports console errors and uncaught exceptions seen on two loads, not warnings, caught errors or one-off errors", () => {
    expect(found("console-error")).toEqual([
      "/console-bad Cannot read properties of undefined (reading 'theme')",
      "/console-bad Widget {n} failed to render",
    ]);
  });

  it("reports a link answering 404, a missing image and script, not working links, flaky targets or sign-out links", () => {
    expect(found("broken-link")).toEqual([
      "/gone-report link",
      "/img/missing.png asset",
      "/js/missing.js asset",
    ]);
    expect(site.hits.get("GET /logout")).toBeUndefined();
    expect(site.hits.get("GET /sometimes")).toBe(2);
    const link = candidates.find((draft) => draft.location.value === "/gone-report");
    expect(link?.evidence.map((item) => item.description).join("\n")).toContain("linked from: /links-bad");
    expect(link?.evidence.map((item) => item.description).join("\n")).toContain('"Old report"');
  });

  it("still checks the links of the pages it opened when opening them took the whole time", async () => {
    const hurried = probeContext({
      profile: profileFor({
        name: "site",
        source: {},
        environment: { mode: "external", base_url: site.baseUrl },
      }),
      map: systemMapFor({
        target: "site",
        baseUrl: site.baseUrl,
        document: { openapi: "3.0.0", paths: {} },
        pages: [{ path: "/links-bad", status: 200, links: [], forms: [], roles: ["anonymous"] }],
      }),
      agent: "BROWSER",
    });
    try {
      const answer = await browsePages(hurried, { max_seconds: 1, checks: ["links"] });
      if (typeof answer === "string") throw new Error(answer);
      expect(answer.candidates.map((draft) => draft.location.value)).toContain("/gone-report");
    } finally {
      await closeRunServices(hurried);
    }
  }, 60_000);

  it("reports the unlabelled input once per rule, not the labelled one", () => {
    expect(found("accessibility")).toEqual(["/a11y-bad label"]);
    const a11y = candidates.find((draft) => draft.defect_class === "accessibility");
    expect(a11y?.evidence.some((item) => item.description.includes("nodes: input"))).toBe(true);
  });

  it("reports the dead button and the failing background request, never clicking destructive controls", () => {
    expect(found("broken-journey")).toEqual([
      "/bg-bad background GET /api/orders",
      "/controls-bad control Save draft #save-draft",
    ]);
    // The Refresh control's POST was blocked (writes are not allowed) yet counted as the control working.
    expect(site.hits.get("POST /api/refresh")).toBeUndefined();
    expect(site.hits.get("GET /api/ping")).toBeGreaterThan(0);
  });

  it("reports sideways overflow at phone width naming the offending element, not a table that scrolls in its box", () => {
    expect(found("visual-defect")).toEqual(["/wide-bad mobile-overflow"]);
    const wide = candidates.find((draft) => draft.defect_class === "visual-defect");
    expect(wide?.summary).toContain("div.banner");
  });

  it("gives every finding a screenshot, what the browser recorded and a generated browser test", () => {
    for (const draft of candidates) {
      expect(draft.domain).toBe("ui");
      const kinds = draft.evidence.map((item) => item.kind);
      expect(kinds).toContain("log");
      expect(kinds).toContain("failing_test");
      expect(draft.reproduction.test?.command).toMatch(/^node --test tests\/qaas\/.+\.test\.mjs$/);
      if (draft.defect_class !== "broken-link" || draft.dedupe?.discriminator === "asset")
        expect(draft.evidence.some((item) => item.uri?.endsWith("screenshot.png"))).toBe(true);
    }
  });
});

describe("the generated browser tests", () => {
  // Written under node_modules so the script resolves playwright-core as it would inside a project.
  const folder = path.join(process.cwd(), "node_modules", ".cache", "qaas-browser-tests");

  function generatedTest(draft: EnvelopeDraft | undefined): string {
    const uri = draft?.evidence.find((item) => item.kind === "failing_test")?.uri;
    if (!uri) throw new Error("no generated test");
    const name = uri.replace(/^artifact:\/\/[^/]+\//, "");
    fs.mkdirSync(folder, { recursive: true });
    const file = path.join(folder, path.basename(name));
    fs.copyFileSync(path.join(context.artifactsDir, name), file);
    return file;
  }

  // Asynchronous: the fixture server answering the test lives in this process.
  function run(file: string): Promise<number> {
    return runWithOutput(file).then((result) => result.code);
  }

  function runWithOutput(file: string): Promise<{ code: number; stdout: string }> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        ["--test", "--test-reporter=tap", file],
        { env: { ...process.env, QAAS_BASE_URL: site.baseUrl }, timeout: 60_000 },
        (error, stdout) =>
          resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout }),
      );
    });
  }

  it("fail on their own assertion, which REPRODUCER needs to call a finding reproduced", async () => {
    const drafts = [
      candidates.find((draft) => draft.location.value === "/gone-report"),
      candidates.find((draft) => draft.defect_class === "visual-defect"),
    ];
    const files = drafts.map(generatedTest);
    try {
      for (const file of files) {
        const { code, stdout } = await runWithOutput(file);
        expect(code).toBe(1);
        const failure = parseTap(stdout).find((entry) => !entry.passed);
        expect(isOwnAssertion(failure?.message, fs.readFileSync(file, "utf8"))).toBe(true);
      }
    } finally {
      for (const file of files) fs.rmSync(file, { force: true });
    }
  }, 120_000);

  it("fail while the defect exists and pass once it is fixed", async () => {
    const exception = candidates.find(
      (draft) => draft.defect_class === "console-error" && draft.title.startsWith("Uncaught exception"),
    );
    const link = candidates.find((draft) => draft.location.value === "/gone-report");
    const image = candidates.find((draft) => draft.location.value === "/img/missing.png");
    const files = [generatedTest(exception), generatedTest(link), generatedTest(image)];
    try {
      expect(await Promise.all(files.map(run))).toEqual([1, 1, 1]);
      site.setFixed(true);
      expect(await Promise.all(files.map(run))).toEqual([0, 0, 0]);
    } finally {
      site.setFixed(false);
      for (const file of files) fs.rmSync(file, { force: true });
    }
  }, 120_000);
});

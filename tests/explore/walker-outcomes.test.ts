import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { resolveBudget } from "../../src/explore/budget.ts";
import { walkCharter } from "../../src/explore/charter-walker.ts";
import { newRunFile, RunFileWriter } from "../../src/explore/run-file.ts";
import type { StepCaller } from "../../src/explore/step-caller.ts";
import { codeOfOpenedPage, codeOfToolError } from "../../src/explore/step-outcome.ts";
import { err, ok, type ToolResult } from "../../src/tools/result.ts";

// How the walker maps what the step tools answered to step codes, driven by a scripted caller (no browser):
// locator ambiguity is narrowed once before it blocks, a write the profile forbids is the environment, an
// error nobody recognises stays blocked-unknown, and the clock and an interruption end the run.

type Script = (tool: string, input: Record<string, unknown>) => ToolResult;

function writerFor(steps = 8, now?: () => number) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-walk-"));
  return new RunFileWriter(
    dir,
    newRunFile({ goal: "g", persona: "anonymous", ...resolveBudget({ steps }) }),
    now,
  );
}

const opened = ok({ status: 200, url: "http://site.test/", title: "Home" });

async function walkWith(
  charter: string,
  script: Script,
  options: { now?: () => number; signal?: AbortSignal } = {},
) {
  const calls: Array<[string, Record<string, unknown>]> = [];
  const call: StepCaller = async (tool, input) => {
    calls.push([tool, input as Record<string, unknown>]);
    return script(tool, input as Record<string, unknown>);
  };
  const writer = writerFor(8, options.now);
  const run = await walkCharter({
    charter,
    persona: "anonymous",
    entry: "/",
    call,
    writer,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return { run, calls };
}

describe("step outcomes", () => {
  it.each([
    ['no role "auditor" in the profile (known: anonymous)', "CREDENTIAL_MISSING"],
    ["sign-in for mia failed: 401", "CREDENTIAL_MISSING"],
    ['no element matches link "Settings" on http://site.test/', "LOCATOR_NOT_FOUND"],
    ["strict mode violation: resolved to 2 elements", "LOCATOR_AMBIGUOUS"],
    ["page.goto: net::ERR_CONNECTION_REFUSED at http://site.test/", "ENVIRONMENT_UNAVAILABLE"],
    ['no element matches link "Log in" on http://site.test/', "LOCATOR_NOT_FOUND"],
    ["page.goto: net::ERR_CONNECTION_REFUSED at http://site.test/login", "ENVIRONMENT_UNAVAILABLE"],
    ["something odd happened", undefined],
  ])("%s → %s", (error, code) => {
    expect(codeOfToolError(error)).toBe(code);
  });

  it("reads an opened page: no answer is the environment, 401/403 the account, other statuses opened", () => {
    expect(codeOfOpenedPage({ status: null, url: "", title: "", error: "net::ERR_CONNECTION_REFUSED" })).toBe(
      "ENVIRONMENT_UNAVAILABLE",
    );
    expect(codeOfOpenedPage({ status: 403, url: "", title: "" })).toBe("CREDENTIAL_MISSING");
    expect(codeOfOpenedPage({ status: 404, url: "", title: "" })).toBeUndefined();
  });
});

describe("walker outcomes", () => {
  it("narrows an ambiguous locator once, uses a repeated control, and blocks on different ones", async () => {
    const repeated = await walkWith("find a way to Settings", (tool) => {
      if (tool === "navigate") return opened;
      if (tool === "locate") return ok({ count: 2, elements: [{ name: "Settings" }, { name: "Settings" }] });
      if (tool === "act") return ok({ url_after: "http://site.test/settings" });
      return err("unexpected");
    });
    expect(repeated.run.steps[1]).toMatchObject({ status: "passed" });

    const different = await walkWith("find a way to Settings", (tool, input) => {
      if (tool === "navigate") return opened;
      if (tool === "locate") {
        return ok({ count: 2, elements: [{ name: "Settings" }, { name: "Settings (advanced)" }] });
      }
      if (tool === "crawl") return ok({ pages: [{ path: "/", title: "Home" }] });
      return err(`unexpected ${tool} ${JSON.stringify(input)}`);
    });
    const locates = different.calls.filter(([tool]) => tool === "locate").map(([, input]) => input.target);
    expect(locates).toEqual([
      { role: "link", name: "Settings" },
      { role: "link", name: "Settings", exact: true },
    ]);
    expect(different.run.steps[1]).toMatchObject({ status: "blocked", code: "LOCATOR_AMBIGUOUS" });
  });

  it("calls a form submission the profile refuses to send blocked by the environment", async () => {
    const { run } = await walkWith("create a note", (tool, input) => {
      if (tool === "navigate") return opened;
      if (tool === "locate") {
        const target = input.target as { role: string; name?: string };
        if (target.role === "textbox")
          return ok({ count: 1, elements: [{ name: "Title", visible: true, enabled: true }] });
        return ok({ count: target.name === "create note" ? 1 : 0, elements: [{ name: "Create note" }] });
      }
      if (tool === "act" && input.action === "fill") return ok({});
      if (tool === "act") {
        return ok({
          url_after: "http://site.test/",
          page_changed: false,
          requests: [
            {
              method: "POST",
              url: "http://site.test/notes",
              status: null,
              failure: "net::ERR_BLOCKED_BY_CLIENT",
            },
          ],
        });
      }
      return err("unexpected");
    });
    expect(run.steps[1]).toMatchObject({
      title: "complete the note form",
      status: "blocked",
      code: "ENVIRONMENT_UNAVAILABLE",
      detail: expect.stringMatching(/allow_writes/),
    });
  });

  it("leaves an error nobody recognises as a failed step with no code: blocked-unknown, not a product failure", async () => {
    const { run } = await walkWith('check "Welcome"', (tool) =>
      tool === "navigate" ? opened : err("the tab crashed"),
    );
    expect(run.steps[1]).toMatchObject({ status: "failed", detail: "the tab crashed" });
    expect(run.steps[1]!.code).toBeUndefined();
    expect(run.findings).toEqual([]);
  });

  it("stops on time before the next step, and ends as interrupted when the run is aborted", async () => {
    let clock = 0;
    const timed = await walkWith(
      'check "A" and "B"',
      (tool) => {
        clock += 6 * 60_000;
        return tool === "navigate" ? opened : ok({ verdict: "pass", code: "OK", detail: "ok" });
      },
      { now: () => clock },
    );
    expect(timed.run.steps).toHaveLength(2);
    expect(timed.run.ended?.reason).toBe("time");

    const controller = new AbortController();
    controller.abort();
    const aborted = await walkWith("find a way to Settings", () => opened, { signal: controller.signal });
    expect(aborted.run.steps).toEqual([]);
    expect(aborted.run.ended?.reason).toBe("interrupted");
  });
});

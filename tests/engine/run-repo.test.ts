import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { simpleGit } from "simple-git";
import { describe, expect, it } from "vitest";
import { checkoutRepo } from "../../src/run/repo-checkout.ts";
import { startRun } from "../../src/run/start-run.ts";
import { MockSeat } from "../../src/seats/mock-seat.ts";
import { tempProject } from "../support/temp-config.ts";

// `qaas run --repo`: a repository given by path or file:// URL is cloned into the home (no network), its
// own profile is used when it has one, else `qaas init`'s guess, and the run goes on the clone.

async function repository(files: Record<string, string>): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-repo-"));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  const git = simpleGit(dir);
  await git.init();
  await git.add(".");
  await git.addConfig("user.email", "test@example.invalid").addConfig("user.name", "test");
  await git.commit("first");
  return dir;
}

describe("qaas run --repo", () => {
  it("clones a local path and a file:// URL, uses the repository's profile, and runs on the clone", async () => {
    const repo = await repository({
      "qaas.yaml": "name: cloned\nsource:\n  path: .\nenvironment:\n  mode: none\n",
      "README.md": "a repository\n",
    });
    const project = tempProject();
    project.addMode("quick", { roster: ["MAPPER"], budget: { usd: 1 } });

    for (const source of [repo, pathToFileURL(repo).href]) {
      const checkout = await checkoutRepo({ home: project.home, repo: source, configDir: project.configDir });
      expect(checkout.guessed).toBe(false);
      expect(checkout.root.startsWith(path.join(project.home, "workspaces"))).toBe(true);
      expect(fs.readFileSync(path.join(checkout.root, "README.md"), "utf8")).toBe("a repository\n");
      const { report } = await startRun({
        home: project.home,
        configDir: project.configDir,
        mode: "quick",
        target: checkout.profile,
        json: true,
        seatFactory: () => new MockSeat({ run: { script: [{ finish: "mapped" }] } }),
      });
      expect(report.target.name).toBe("cloned");
      expect(report.status).toBe("completed");
    }
  }, 60_000);

  it("guesses a profile with qaas init when the repository has none, and checks out --ref", async () => {
    const repo = await repository({ "package.json": '{ "name": "guessed-app" }\n' });
    await simpleGit(repo).addTag("v1");
    const project = tempProject();
    const checkout = await checkoutRepo({
      home: project.home,
      repo,
      ref: "v1",
      configDir: project.configDir,
    });
    expect(checkout.guessed).toBe(true);
    expect(fs.readFileSync(checkout.profile, "utf8")).toContain(
      `name: ${path.basename(repo).toLowerCase()}\n`,
    );
    await expect(checkoutRepo({ home: project.home, repo, ref: "no-such-ref" })).rejects.toThrow(
      /REPO_CLONE_FAILED|cannot clone/,
    );
  }, 60_000);
});

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { findOwnership, ownerOf } from "../../src/probes/ownership/ownership.ts";
import { writeTree } from "./write-tree.ts";

function git(root: string, args: string[], author?: { name: string; email: string }): void {
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: root };
  const identity = author
    ? {
        GIT_AUTHOR_NAME: author.name,
        GIT_AUTHOR_EMAIL: author.email,
        GIT_COMMITTER_NAME: author.name,
        GIT_COMMITTER_EMAIL: author.email,
      }
    : {};
  const result = spawnSync("git", ["-c", "commit.gpgsign=false", ...args], {
    cwd: root,
    env: { ...env, ...identity },
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`git ${args.join(" ")} failed: ${result.stderr}`);
}

describe("findOwnership", () => {
  it("resolves CODEOWNERS with the last matching rule winning, folded into folders", () => {
    const root = writeTree({
      ".github/CODEOWNERS": [
        "# default owners",
        "*                @org/everyone",
        "/api/            @org/backend   # anchored folder",
        "*.sql            @org/dba",
        "web/             @org/frontend",
        "/web/legacy/     ",
      ].join("\n"),
      "api/server.js": "",
      "api/routes/users.js": "",
      "api/schema.sql": "",
      "web/index.html": "",
      "web/legacy/old.js": "",
      "README.md": "",
      "defects.yaml": "never read",
    });
    const result = findOwnership(root);
    expect(result.source).toEqual({ kind: "codeowners", file: ".github/CODEOWNERS" });
    expect(result.entries).toEqual([
      { path: ".github", owner: "@org/everyone", source: "codeowners" },
      { path: "api/routes", owner: "@org/backend", source: "codeowners" },
      { path: "api/schema.sql", owner: "@org/dba", source: "codeowners" },
      { path: "api/server.js", owner: "@org/backend", source: "codeowners" },
      { path: "web/index.html", owner: "@org/frontend", source: "codeowners" },
      { path: "README.md", owner: "@org/everyone", source: "codeowners" },
    ]);
    expect(ownerOf(result.entries, "api/routes/users.js")?.owner).toBe("@org/backend");
    expect(ownerOf(result.entries, "web/legacy/old.js")).toBeUndefined();
  });

  it("falls back to the most frequent recent author per top-level folder in git", () => {
    const root = writeTree({ "server/app.py": "1", "client/main.js": "1", "notes.txt": "" });
    const alice = { name: "Alice", email: "alice@example.test" };
    const bob = { name: "Bob", email: "bob@example.test" };
    git(root, ["init", "-q", "-b", "main"]);
    git(root, ["add", "."]);
    git(root, ["commit", "-q", "-m", "initial"], alice);
    for (const round of [2, 3]) {
      fs.writeFileSync(path.join(root, "server/app.py"), String(round));
      git(root, ["commit", "-q", "-am", `server ${round}`], bob);
    }
    fs.writeFileSync(path.join(root, "client/main.js"), "2");
    git(root, ["commit", "-q", "-am", "client"], alice);

    const result = findOwnership(root);
    expect(result.source).toEqual({ kind: "git" });
    expect(result.entries).toEqual([
      { path: "client", owner: "Alice <alice@example.test>", source: "git" },
      { path: "server", owner: "Bob <bob@example.test>", source: "git" },
    ]);
  });

  it("answers no owners outside git without CODEOWNERS", () => {
    const result = findOwnership(writeTree({ "a/b.js": "" }));
    expect(result).toMatchObject({ entries: [], source: { kind: "none" } });
  });
});

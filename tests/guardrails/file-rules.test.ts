import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkAction } from "../../src/guardrails/check.ts";
import type { Row } from "./fixture.ts";
import {
  contextFor,
  createFixture,
  expectRow,
  FIXER,
  loadedTarget,
  RECKLESS,
  REPRODUCER,
  TRIAGE,
  write,
} from "./fixture.ts";

// Every rule about changing files, on a real tree with links out of it: where a write really lands,
// the answer key, forbidden path classes, the immutable test and the diff budget.

const fixture = createFixture();
afterAll(() => fixture.cleanup());
const target = loadedTarget(fixture);

const read = (file: string) => ({ kind: "read_file", path: file }) as const;
const changed = (entries: Record<string, number>) => ({ filesChanged: new Map(Object.entries(entries)) });
const failingTest = { immutableTest: "tests/repro/failing.test.ts" };

const ROWS: Row[] = [
  // write-scope
  {
    name: "reproducer writes under tests/qaas",
    agent: REPRODUCER,
    action: write("tests/qaas/new.test.ts"),
    expected: "allowed",
  },
  {
    name: "reproducer writes into folders not made yet",
    agent: REPRODUCER,
    action: write("tests/qaas/a/b/c.test.ts"),
    expected: "allowed",
  },
  {
    name: "reproducer writes an absolute path inside the root",
    agent: REPRODUCER,
    action: write(path.join(fixture.root, "tests/qaas/abs.test.ts")),
    expected: "allowed",
  },
  {
    name: "reproducer writes source code",
    agent: REPRODUCER,
    action: write("src/app.ts"),
    expected: "write-scope",
  },
  {
    name: "absolute path outside the root",
    agent: FIXER,
    action: write(path.join(fixture.outside, "x.ts")),
    expected: "write-scope",
  },
  { name: "`..` escape", agent: FIXER, action: write("../outside/x.ts"), expected: "write-scope" },
  {
    name: "`..` escape hidden in the middle",
    agent: REPRODUCER,
    action: write("tests/qaas/../../../outside/x.ts"),
    expected: "write-scope",
  },
  {
    name: "parent folder is a link out of the root",
    agent: REPRODUCER,
    action: write("tests/qaas/escape/x.ts"),
    expected: "write-scope",
  },
  {
    name: "the file is a link out of the root",
    agent: REPRODUCER,
    action: write("tests/qaas/leak.ts"),
    expected: "write-scope",
  },
  {
    name: "a dangling link pointing out of the root",
    agent: FIXER,
    action: write("tests/qaas/dangling.ts"),
    expected: "write-scope",
  },
  {
    name: "`..` after a link is applied to the link's real parent",
    agent: REPRODUCER,
    action: write("tests/qaas/escape/../answers/x.test.ts"),
    expected: "write-scope",
  },
  {
    name: "`..` after a link may come back inside",
    agent: REPRODUCER,
    action: write("tests/qaas/escape/../target/tests/qaas/x.test.ts"),
    expected: "allowed",
  },
  {
    name: "a link inside the root is judged where it lands",
    agent: REPRODUCER,
    action: write("tests/qaas/to-src/app.ts"),
    expected: "write-scope",
  },
  {
    name: "fixer writes through a link that stays inside",
    agent: FIXER,
    action: write("tests/qaas/to-src/app.ts"),
    expected: "allowed",
  },
  { name: "the root itself is not a file", agent: FIXER, action: write("."), expected: "write-scope" },
  {
    name: "a non-writer writes nothing",
    agent: TRIAGE,
    action: write("tests/qaas/x.test.ts"),
    expected: "write-scope",
  },
  {
    name: "no source root, no writes",
    agent: FIXER,
    action: write("src/app.ts"),
    expected: "write-scope",
    target: { ...target, root: undefined },
  },
  {
    name: "reproducer commits its test",
    agent: REPRODUCER,
    action: { kind: "git_commit", branch: "qa/repro/f1", paths: ["tests/qaas/f1.test.ts"] },
    expected: "allowed",
  },
  {
    name: "reproducer commits source code",
    agent: REPRODUCER,
    action: { kind: "git_commit", branch: "qa/repro/f1", paths: ["tests/qaas/f1.test.ts", "src/app.ts"] },
    expected: "write-scope",
  },
  // golden-ledger
  { name: "reading source code", agent: TRIAGE, action: read("src/app.ts"), expected: "allowed" },
  { name: "reading defects.yaml", agent: TRIAGE, action: read("defects.yaml"), expected: "golden-ledger" },
  {
    name: "reading defects.yaml by another spelling",
    agent: TRIAGE,
    action: read("src/../defects.yaml"),
    expected: "golden-ledger",
  },
  {
    name: "reading any defects.yaml in the tree",
    agent: TRIAGE,
    action: read("deep/inside/Defects.yaml"),
    expected: "golden-ledger",
  },
  {
    name: "reading the golden ledger by absolute path",
    agent: TRIAGE,
    action: read(fixture.goldenLedger),
    expected: "golden-ledger",
  },
  {
    name: "reading the golden ledger through a link",
    agent: TRIAGE,
    action: read("notes.yaml"),
    expected: "golden-ledger",
  },
  { name: "writing defects.yaml", agent: FIXER, action: write("defects.yaml"), expected: "golden-ledger" },
  // forbidden-path
  {
    name: "fixer writes a migration",
    agent: FIXER,
    action: write("db/migrations/002.sql"),
    expected: "forbidden-path",
  },
  {
    name: "a forbidden class inside the write scope",
    agent: REPRODUCER,
    action: write("tests/qaas/migrations/x.sql"),
    expected: "forbidden-path",
  },
  {
    name: "fixer writes auth code",
    agent: FIXER,
    action: write("src/auth/session.ts"),
    expected: "forbidden-path",
  },
  { name: "fixer writes a secret", agent: FIXER, action: write(".env"), expected: "forbidden-path" },
  {
    name: "fixer writes a CI workflow",
    agent: FIXER,
    action: write(".github/workflows/ci.yml"),
    expected: "forbidden-path",
  },
  {
    name: "fixer commits a migration",
    agent: FIXER,
    action: { kind: "git_commit", branch: "fix/x", paths: ["db/migrations/001.sql"] },
    expected: "forbidden-path",
  },
  { name: "fixer writes ordinary code", agent: FIXER, action: write("src/app.ts", 10), expected: "allowed" },
  // immutable-test
  {
    name: "fixer edits the failing test",
    agent: FIXER,
    action: write("tests/repro/failing.test.ts"),
    expected: "immutable-test",
    guard: failingTest,
  },
  {
    name: "fixer edits the failing test by another spelling",
    agent: FIXER,
    action: write("tests/./repro/../repro/failing.test.ts"),
    expected: "immutable-test",
    guard: failingTest,
  },
  {
    name: "fixer edits the failing test through a link",
    agent: FIXER,
    action: write("tests/qaas/failing-link.ts"),
    expected: "immutable-test",
    guard: failingTest,
  },
  {
    name: "fixer commits the failing test",
    agent: FIXER,
    action: { kind: "git_commit", branch: "fix/x", paths: ["src/a.ts", "tests/repro/failing.test.ts"] },
    expected: "immutable-test",
    guard: failingTest,
  },
  {
    name: "fixer edits another test",
    agent: FIXER,
    action: write("tests/repro/other.test.ts"),
    expected: "allowed",
    guard: failingTest,
  },
  {
    name: "a writer without the policy may edit it",
    agent: RECKLESS,
    action: write("tests/repro/failing.test.ts"),
    expected: "allowed",
    guard: failingTest,
  },
  // diff-budget
  {
    name: "second distinct file",
    agent: FIXER,
    action: write("src/b.ts", 5),
    expected: "allowed",
    guard: changed({ "src/a.ts": 5 }),
  },
  {
    name: "third distinct file",
    agent: FIXER,
    action: write("src/app.ts", 1),
    expected: "diff-budget",
    guard: changed({ "src/a.ts": 5, "src/b.ts": 5 }),
  },
  {
    name: "rewriting a changed file is not a new file",
    agent: FIXER,
    action: write("./src/a.ts", 5),
    expected: "allowed",
    guard: changed({ "src/a.ts": 5, "src/b.ts": 5 }),
  },
  {
    name: "lines over the budget",
    agent: FIXER,
    action: write("src/a.ts", 41),
    expected: "diff-budget",
    guard: changed({ "src/a.ts": 5, "src/b.ts": 5 }),
  },
  {
    name: "exactly the line budget",
    agent: FIXER,
    action: write("src/a.ts", 40),
    expected: "allowed",
    guard: changed({ "src/a.ts": 5, "src/b.ts": 5 }),
  },
  {
    name: "no budget declared is unlimited",
    agent: REPRODUCER,
    action: write("tests/qaas/c.test.ts", 5000),
    expected: "allowed",
    guard: changed({ "tests/qaas/a.test.ts": 900, "tests/qaas/b.test.ts": 900 }),
  },
];

describe("file rules", () => {
  it.each(ROWS)("$name → $expected", (row) => expectRow(row, target));

  it("names the path class and says the change stops at a person", () => {
    const decision = checkAction(FIXER, write("db/migrations/002.sql"), contextFor(FIXER, target));
    expect(decision.allowed === false && decision.reason).toMatch(/migrations path class.*stops at a person/);
  });
});

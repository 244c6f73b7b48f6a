import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll } from "vitest";

// Every temporary folder a test file makes under the system's temp folder with a `qaas-` prefix (its
// fixtures, or the code under test) is removed once the file's tests are done: thousands of runs of the
// suite must not fill /tmp. Set up for every test file by vitest.config.ts.

const made: string[] = [];
const prefix = path.join(os.tmpdir(), "qaas-");
const mkdtempSync = fs.mkdtempSync;
fs.mkdtempSync = ((folderPrefix: string, options?: fs.EncodingOption) => {
  const folder = mkdtempSync(folderPrefix, options);
  if (String(folderPrefix).startsWith(prefix)) made.push(String(folder));
  return folder;
}) as typeof fs.mkdtempSync;

afterAll(() => {
  // Kept for a post-mortem when asked (a long test that failed once in several tries).
  if (process.env.QAAS_TEST_KEEP_TEMP) return;
  for (const folder of made.splice(0)) fs.rmSync(folder, { recursive: true, force: true });
});

import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import { injectionTools } from "../../src/tools/servers/injection-server.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import { callTool } from "../support/fake-run-context.ts";
import { uploadedFile, uploadOperation } from "../support/multipart-upload.ts";

// A multipart upload that stores the file under the name the browser sent with it: the vulnerable build
// joins that name to its uploads folder, the safe one keeps the name's last part. qaas sends a new plain
// name first, finds it on disk, then `../` and another new name, and removes what it wrote.

const DOCUMENT = {
  openapi: "3.0.3",
  info: { title: "uploads", version: "1" },
  paths: { "/api/attachments": uploadOperation("document") },
};

interface UploadApp {
  baseUrl: string;
  root: string;
  /** Names the app was asked to store, as sent. */
  names: string[];
  close(): Promise<void>;
}

async function startUploads(vulnerable: boolean): Promise<UploadApp> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-uploads-app-"));
  const folder = path.join(root, "data", "uploads");
  fs.mkdirSync(folder, { recursive: true });
  fs.writeFileSync(path.join(root, "data", "keep.txt"), "the application's own file\n");
  const names: string[] = [];
  const server = http.createServer(async (request, response) => {
    if (request.method !== "POST" || request.url !== "/api/attachments") return response.writeHead(404).end();
    const file = await uploadedFile(request, "document");
    if (!file) {
      response.writeHead(400, { "content-type": "application/json" });
      return response.end('{"error":"a document file is required"}');
    }
    names.push(file.name);
    const name = vulnerable ? file.name : path.basename(file.name);
    fs.writeFileSync(path.join(folder, name), Buffer.from(await file.arrayBuffer()));
    response.writeHead(201, { "content-type": "application/json" });
    response.end(JSON.stringify({ stored: path.basename(name) }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    root,
    names,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

let vulnerable: UploadApp;
let safe: UploadApp;

beforeAll(async () => {
  [vulnerable, safe] = await Promise.all([startUploads(true), startUploads(false)]);
});
afterAll(async () => {
  await Promise.all([vulnerable.close(), safe.close()]);
});

async function probe(app: UploadApp): Promise<EnvelopeDraft[]> {
  const profile = profileFor({
    name: "uploads",
    source: {},
    environment: { mode: "managed", base_url: app.baseUrl },
  });
  const map = systemMapFor({ target: "uploads", baseUrl: app.baseUrl, document: DOCUMENT });
  const context = probeContext({ profile, map, root: app.root, agent: "AUDITOR" });
  const tool = injectionTools.find((candidate) => candidate.name === "probe_path_traversal")!;
  const result = await callTool(tool, {}, context);
  if (!result.ok) throw new Error(result.error);
  const { candidates } = result.data as { candidates: EnvelopeDraft[] };
  for (const candidate of candidates) EnvelopeDraftSchema.parse(candidate);
  return candidates;
}

/** Files under `root` whose name qaas made up. */
const leftovers = (root: string) =>
  fs
    .readdirSync(root, { recursive: true, encoding: "utf8" })
    .filter((file) => /qaas-[a-z0-9]+\.txt$/.test(file));

describe("probe_path_traversal: the file name a multipart upload sends", () => {
  it("finds the upload that writes where the name says, and leaves nothing of its own behind", async () => {
    const candidates = await probe(vulnerable);
    expect(candidates.map((candidate) => candidate.title)).toEqual([
      "Path traversal: the file name sent with body part document of POST /api/attachments writes files outside their folder",
    ]);
    expect(candidates[0]!.summary).toMatch(
      /wrote data\/uploads\/qaas-[a-z0-9]+\.txt; set to \.\.\/ and another new name, it wrote data\/qaas-[a-z0-9]+\.txt, one folder above/,
    );
    // Only new names of qaas's own went out, and every file it wrote is gone; the app's own file is intact.
    expect(vulnerable.names.filter((name) => name.includes("/"))).not.toEqual([]);
    for (const name of vulnerable.names.filter((each) => each.includes("/")))
      expect(name).toMatch(/^(\.\.\/|\.\.\.\.\/\/)qaas-[a-z0-9]+\.txt$/);
    expect(leftovers(vulnerable.root)).toEqual([]);
    expect(fs.readFileSync(path.join(vulnerable.root, "data", "keep.txt"), "utf8")).toBe(
      "the application's own file\n",
    );
  });

  it("leaves alone the upload that keeps only the name's last part", async () => {
    expect(await probe(safe)).toEqual([]);
    expect(leftovers(safe.root)).toEqual([]);
  });
});

import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import { probeXssTool } from "../../src/tools/servers/security-server.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import { callTool } from "../support/fake-run-context.ts";
import { uploadedFile, uploadOperation } from "../support/multipart-upload.ts";

// Avatars uploaded as multipart files and served back by name. The `inline` build serves each file with
// the type its extension says (an uploaded .html is a page of the site); the look-alikes serve it as a
// download, or accept images only. The answer names the stored file, not where it is served: qaas finds
// the place from the map's read under the same path, or from where the file landed on disk.

type Build = "inline" | "attachment" | "images-only";

const DOCUMENT = {
  openapi: "3.0.3",
  info: { title: "avatars", version: "1" },
  paths: {
    "/api/avatars": uploadOperation("image"),
    "/api/avatars/{file}": {
      get: {
        parameters: [{ name: "file", in: "path", required: true, schema: { type: "string" } }],
        responses: { "200": { description: "the file" } },
      },
    },
  },
};

const TYPES: Record<string, string> = { ".html": "text/html; charset=utf-8", ".png": "image/png" };

interface AvatarApp {
  baseUrl: string;
  root: string;
  close(): Promise<void>;
}

async function startAvatars(build: Build): Promise<AvatarApp> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-avatars-app-"));
  const folder = path.join(root, "public", "avatars");
  fs.mkdirSync(folder, { recursive: true });
  const server = http.createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://avatars.local");
    if (request.method === "POST" && url.pathname === "/api/avatars") {
      const file = await uploadedFile(request, "image");
      const name = file ? path.basename(file.name) : "";
      if (!file || name === "" || (build === "images-only" && !name.endsWith(".png"))) {
        response.writeHead(400, { "content-type": "application/json" });
        return response.end('{"error":"a PNG image is required"}');
      }
      fs.writeFileSync(path.join(folder, name), Buffer.from(await file.arrayBuffer()));
      response.writeHead(201, { "content-type": "application/json" });
      return response.end(JSON.stringify({ stored: name }));
    }
    const served = /^\/api\/avatars\/([^/]+)$/.exec(url.pathname);
    if (request.method === "GET" && served) {
      const name = path.basename(decodeURIComponent(served[1]!));
      const file = path.join(folder, name);
      if (!fs.existsSync(file)) return response.writeHead(404).end();
      response.writeHead(200, {
        "content-type": TYPES[path.extname(name)] ?? "application/octet-stream",
        ...(build === "attachment" ? { "content-disposition": `attachment; filename="${name}"` } : {}),
      });
      return response.end(fs.readFileSync(file));
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    root,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

const apps: Partial<Record<Build, AvatarApp>> = {};

beforeAll(async () => {
  for (const build of ["inline", "attachment", "images-only"] as const)
    apps[build] = await startAvatars(build);
});
afterAll(async () => {
  await Promise.all(Object.values(apps).map((app) => app.close()));
});

async function probe(
  app: AvatarApp,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const profile = profileFor({
    name: "avatars",
    source: {},
    environment: { mode: "managed", base_url: app.baseUrl },
  });
  const map = systemMapFor({ target: "avatars", baseUrl: app.baseUrl, document: DOCUMENT });
  const context = probeContext({ profile, map, root: app.root, agent: "AUDITOR" });
  const result = await callTool(probeXssTool, {}, context);
  if (!result.ok) throw new Error(result.error);
  const data = result.data as { candidates: EnvelopeDraft[]; stats: Record<string, unknown> };
  for (const candidate of data.candidates) EnvelopeDraftSchema.parse(candidate);
  return data;
}

const uploadFindings = (candidates: EnvelopeDraft[]) =>
  candidates.filter((candidate) => candidate.title.startsWith("Stored XSS through an upload"));

describe("probe_xss: an uploaded HTML file served back inline", () => {
  it("finds the avatar served with the type its name says, and removes the file it uploaded", async () => {
    const { candidates, stats } = await probe(apps.inline!);
    expect(uploadFindings(candidates).map((candidate) => candidate.title)).toEqual([
      "Stored XSS through an upload: an HTML file sent to POST /api/avatars is served inline at /api/avatars/{file}",
    ]);
    const described = uploadFindings(candidates)[0]!.evidence.map((item) => item.description);
    expect(described).toContainEqual(
      expect.stringMatching(/^uploaded: POST .*\/api\/avatars as anonymous → 201$/),
    );
    expect(described).toContainEqual(
      expect.stringMatching(
        /^served inline: GET .*\/api\/avatars\/qaas-qaas[0-9a-f]+\.html as anonymous → 200$/,
      ),
    );
    expect(stats.uploads).toMatchObject({ upload_points: 1, uploaded: 1, confirmed: 1 });
    expect(
      fs
        .readdirSync(path.join(apps.inline!.root, "public", "avatars"))
        .filter((name) => name.endsWith(".html")),
    ).toEqual([]);
  });

  it("leaves alone the avatar served as a download and the upload that takes images only", async () => {
    expect(uploadFindings((await probe(apps.attachment!)).candidates)).toEqual([]);
    const imagesOnly = await probe(apps["images-only"]!);
    expect(uploadFindings(imagesOnly.candidates)).toEqual([]);
    expect(imagesOnly.stats.uploads).toMatchObject({ upload_points: 1, uploaded: 0 });
  });
});

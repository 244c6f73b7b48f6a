import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { isRecoveryPromise } from "../../src/probes/guide/recovery-copy.ts";
import { closeRunServices } from "../../src/tools/run-end.ts";
import { guideTools } from "../../src/tools/servers/guide-server.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";

// check_copy: help that promises deleted notes can be restored, against a notes API that deletes for good
// (flagged) and one that has a restore endpoint (not flagged); a soft delete that keeps serving the note is
// not "gone", and a target without writes gives no second signal, so neither is flagged.

const HELP =
  "<p>Notes you delete are moved to the trash and can be restored within 30 days.</p><p>A note's title can be up to 100 characters.</p>";

function page(title: string, body: string): string {
  return `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`;
}

interface Shop {
  baseUrl: string;
  deletes: string[];
  created: string[];
  close(): Promise<void>;
}

async function startNotes(options: { softDelete?: boolean; maxTitle?: number }): Promise<Shop> {
  const notes = new Map<string, { id: number; title: string; deleted?: boolean }>([
    ["1", { id: 1, title: "seeded by the application" }],
  ]);
  let next = 2;
  const deletes: string[] = [];
  const created: string[] = [];
  const server = http.createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0] as string;
    const json = (status: number, value: unknown) =>
      response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
    const html = (body: string) => response.writeHead(200, { "content-type": "text/html" }).end(body);
    if (path === "/") return html(page("Notes", `<nav><a href="/">Notes</a> <a href="/help">Help</a></nav>`));
    if (path === "/help") return html(page("Help", `<nav><a href="/">Notes</a></nav><h1>Help</h1>${HELP}`));
    if (path === "/api/notes" && request.method === "GET")
      return json(
        200,
        [...notes.values()].filter((note) => !note.deleted),
      );
    if (path === "/api/notes" && request.method === "POST") {
      let body = "";
      request.on("data", (chunk) => {
        body += chunk;
      });
      request.on("end", () => {
        const note = { id: next++, title: String((JSON.parse(body || "{}") as { title?: string }).title) };
        if (note.title.length > (options.maxTitle ?? 100)) return json(422, { error: "title too long" });
        notes.set(String(note.id), note);
        created.push(String(note.id));
        json(201, note);
      });
      return;
    }
    const id = path.match(/^\/api\/notes\/(\d+)$/)?.[1];
    if (id) {
      const note = notes.get(id);
      if (request.method === "DELETE") {
        deletes.push(id);
        if (!note) return json(404, { error: "not found" });
        if (options.softDelete) note.deleted = true;
        else notes.delete(id);
        return response.writeHead(204).end();
      }
      if (!note || (note.deleted && !options.softDelete)) return json(404, { error: "not found" });
      return json(200, note);
    }
    json(404, { error: "not found" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    deletes,
    created,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function notesDocument(withRestore: boolean): Record<string, unknown> {
  const note = { type: "object", properties: { id: { type: "integer" }, title: { type: "string" } } };
  const idParameter = { name: "id", in: "path", required: true, schema: { type: "integer" } };
  return {
    openapi: "3.0.3",
    info: { title: "notes", version: "1" },
    paths: {
      "/api/notes": {
        get: {
          responses: {
            "200": {
              description: "ok",
              content: { "application/json": { schema: { type: "array", items: note } } },
            },
          },
        },
        post: {
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: { type: "object", required: ["title"], properties: { title: { type: "string" } } },
              },
            },
          },
          responses: { "201": { description: "created", content: { "application/json": { schema: note } } } },
        },
      },
      "/api/notes/{id}": {
        parameters: [idParameter],
        get: {
          responses: { "200": { description: "ok", content: { "application/json": { schema: note } } } },
        },
        delete: { responses: { "204": { description: "deleted" } } },
      },
      ...(withRestore
        ? {
            "/api/notes/{id}/restore": {
              parameters: [idParameter],
              post: { responses: { "200": { description: "ok" } } },
            },
          }
        : {}),
    },
  };
}

const contexts: FakeRunContext[] = [];
const servers: Shop[] = [];

afterAll(async () => {
  for (const context of contexts) await closeRunServices(context);
  for (const server of servers) await server.close();
});

async function runCheckCopy(options: {
  withRestore?: boolean;
  softDelete?: boolean;
  writes?: boolean;
  maxTitle?: number;
}) {
  const server = await startNotes({ softDelete: options.softDelete, maxTitle: options.maxTitle });
  servers.push(server);
  const map = systemMapFor({
    target: "notes",
    baseUrl: server.baseUrl,
    document: notesDocument(options.withRestore ?? false),
  });
  const profile = profileFor({
    name: "notes",
    source: {},
    environment: { mode: "external", base_url: server.baseUrl, allow_writes: options.writes ?? true },
  });
  const context = probeContext({ profile, map, agent: "GUIDE" });
  contexts.push(context);
  const tool = guideTools.find((each) => each.name === "check_copy");
  if (!tool) throw new Error("check_copy is missing");
  const answer = await tool.run(tool.input.parse({ max_seconds: 60 }), context);
  if (!answer.ok) throw new Error(answer.error);
  const data = answer.data as {
    candidates: EnvelopeDraft[];
    stats: { recovery: { verdict?: string }; lengths: { verdicts?: string[] } };
  };
  return { ...data, server };
}

describe("check_copy: recovery promises", () => {
  it("tells a promise from a warning", () => {
    expect(
      isRecoveryPromise("Notes you delete are moved to the trash and can be restored within 30 days."),
    ).toBe(true);
    expect(isRecoveryPromise("Deleted notes cannot be recovered.")).toBe(false);
    expect(isRecoveryPromise("Restore the default theme from the settings page.")).toBe(false);
  });

  it("flags help promising restore when nothing restores and the probe's own deleted note is gone", async () => {
    const { candidates, server } = await runCheckCopy({});
    expect(candidates.map((draft) => [draft.defect_class, draft.location.value])).toEqual([
      ["misleading-copy", "/help"],
    ]);
    expect(candidates[0]?.summary).toContain("can be restored within 30 days");
    // Only notes the probe created were deleted, never the application's own.
    expect(server.deletes).not.toContain("1");
    expect(server.deletes.length).toBeGreaterThan(0);
    expect(server.deletes.every((id) => server.created.includes(id))).toBe(true);
  }, 120_000);

  it("does not flag the same help when the API has a restore endpoint", async () => {
    const { candidates, stats, server } = await runCheckCopy({ withRestore: true });
    expect(candidates).toEqual([]);
    expect(stats.recovery.verdict).toMatch(/restore/);
    expect(server.deletes.every((id) => server.created.includes(id))).toBe(true);
  }, 120_000);

  it("does not flag when the deleted note is still served, nor when writes are not allowed", async () => {
    const soft = await runCheckCopy({ softDelete: true });
    expect(soft.candidates).toEqual([]);
    expect(soft.stats.recovery.verdict).toMatch(/not gone/);
    const readOnly = await runCheckCopy({ writes: false });
    expect(readOnly.candidates).toEqual([]);
    expect(readOnly.server.deletes).toEqual([]);
    expect(readOnly.server.created).toEqual([]);
  }, 120_000);
});

describe("check_copy: documented length limits", () => {
  it("flags a documented title length the API refuses while it accepts a short title", async () => {
    const { candidates, server } = await runCheckCopy({ withRestore: true, maxTitle: 80 });
    expect(
      candidates.map((draft) => [draft.defect_class, draft.location.value, draft.dedupe?.discriminator]),
    ).toEqual([["misleading-copy", "/help", "length-title"]]);
    expect(candidates[0]?.summary).toMatch(/title of exactly 100 characters is refused/);
    // The short note the probe created was deleted again.
    expect(server.deletes).toEqual(server.created);
  }, 120_000);

  it("does not flag a documented limit the API honours", async () => {
    const { candidates, stats } = await runCheckCopy({ withRestore: true, maxTitle: 100 });
    expect(candidates).toEqual([]);
    expect(stats.lengths.verdicts?.[0]).toMatch(/100 characters answered 201/);
  }, 120_000);
});

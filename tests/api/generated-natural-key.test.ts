import { execFile } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReproScript, renderFailingTest } from "../../src/probes/evidence/failing-test.ts";

// A create that answers only "added" (no id, no Location) addresses its record by a value the request
// chose (a title, a slug): the generated test must read that record back by the value it sent, as the
// probe did, or it reads nothing and passes while the defect exists.

const execute = promisify(execFile);
const records = new Map<string, string>();
let server: http.Server;
let baseUrl: string;
let folder: string;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      const url = new URL(request.url ?? "/", "http://localhost");
      response.setHeader("content-type", "application/json");
      if (request.method === "POST" && url.pathname === "/notes") {
        const fields =
          request.headers["content-type"]?.includes("json") === true
            ? (JSON.parse(body) as Record<string, string>)
            : Object.fromEntries(new URLSearchParams(body));
        records.set(fields.title!, fields.text!);
        response.end(JSON.stringify({ message: "Note added." }));
        return;
      }
      const title = decodeURIComponent(url.pathname.replace(/^\/notes\//, ""));
      // Anyone reads any note: the defect the test encodes.
      if (records.has(title)) response.end(JSON.stringify({ title, text: records.get(title) }));
      else {
        response.statusCode = 404;
        response.end("{}");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  folder = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-natural-key-"));
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  fs.rmSync(folder, { recursive: true, force: true });
});

function readBack(body: string, contentType: string): ReproScript {
  return {
    title: "another caller cannot read the note",
    steps: [
      {
        name: "created",
        method: "POST",
        path: "/notes",
        body,
        contentType,
        captureId: { parameter: "title" },
      },
      { name: "other", method: "GET", path: "/notes/{{created.id}}" },
    ],
    assertions: [{ kind: "status_in", step: "other", values: [401, 403, 404], message: "must be refused" }],
  };
}

async function fails(script: ReproScript, name: string): Promise<boolean> {
  const file = path.join(folder, `${name}.test.mjs`);
  fs.writeFileSync(file, renderFailingTest(script, undefined, baseUrl));
  return execute(process.execPath, ["--test", file], { timeout: 20_000 }).then(
    () => false,
    () => true,
  );
}

describe("a created record addressed by the key the request sent", () => {
  it("is read back by the title a JSON create sent", async () => {
    const script = readBack('{"title":"note-{{unique}}","text":"private"}', "application/json");
    expect(await fails(script, "json")).toBe(true);
  });

  it("is read back by the title a form create sent", async () => {
    const script = readBack("title=form-{{unique}}&text=private", "application/x-www-form-urlencoded");
    expect(await fails(script, "form")).toBe(true);
  });
});

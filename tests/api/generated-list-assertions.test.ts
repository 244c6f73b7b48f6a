import { execFile } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { driftAssertions } from "../../src/probes/api/contract-probe.ts";
import {
  dottedPath,
  type ReproAssertion,
  renderFailingTest,
} from "../../src/probes/evidence/failing-test.ts";

// A `*` in an assertion's path stands for every item of the list, as the probe judged them: a generated
// test must fail when any item breaks the document, not only the first.

const execute = promisify(execFile);
const bodies: Record<string, unknown> = {
  "/mixed": { items: [{ label: "a" }, { label: null }] },
  "/clean": { items: [{ label: "a" }, { label: "b" }] },
  "/empty": { items: [] },
  "/list": [{ label: "a" }],
  "/trace": { error: 'Traceback (most recent call last):\n  File "/srv/app/report.py", line 12, in build' },
};
let server: http.Server;
let baseUrl: string;
let folder: string;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify(bodies[request.url ?? ""] ?? {}));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  folder = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-list-assertions-"));
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  fs.rmSync(folder, { recursive: true, force: true });
});

async function fails(route: string, assertion: ReproAssertion): Promise<boolean> {
  const file = path.join(folder, `${route.slice(1)}-${assertion.kind}.test.mjs`);
  const script = {
    title: route,
    steps: [{ name: "read", method: "GET", path: route }],
    assertions: [assertion],
  };
  fs.writeFileSync(file, renderFailingTest(script, undefined, baseUrl));
  return execute(process.execPath, ["--test", file], { timeout: 20_000 }).then(
    () => false,
    () => true,
  );
}

describe("generated assertions over every item of a list", () => {
  const typed: ReproAssertion = {
    kind: "json_type",
    step: "read",
    path: "items.*.label",
    type: "string",
    message: "items.*.label: expected string",
  };
  it("json_type fails when a later item has the wrong type, and passes when all match or none exist", async () => {
    expect(await fails("/mixed", typed)).toBe(true);
    expect(await fails("/clean", typed)).toBe(false);
    expect(await fails("/empty", typed)).toBe(false);
  });

  it("json_has and json_lacks judge every item", async () => {
    const has: ReproAssertion = { kind: "json_has", step: "read", path: "items.*.label", message: "has" };
    const lacks: ReproAssertion = {
      kind: "json_lacks",
      step: "read",
      path: "items.*.label",
      message: "lacks",
    };
    expect(await fails("/clean", has)).toBe(false);
    expect(await fails("/clean", lacks)).toBe(true);
    bodies["/partial"] = { items: [{ label: "a" }, {}] };
    expect(await fails("/partial", has)).toBe(true);
  });

  it("a field of a list at the body's root is asserted on that list's items", async () => {
    // The exposure probe names it `[0].label`; the test must not read it as a field named "" first.
    const lacks: ReproAssertion = {
      kind: "json_lacks",
      step: "read",
      path: dottedPath("[0].label"),
      message: "lacks",
    };
    expect(lacks.path).toBe("0.label");
    expect(await fails("/list", lacks)).toBe(true);
    expect(await fails("/clean", lacks)).toBe(false);
  });

  it("body_not_matches finds a traceback escaped inside a JSON string, as the probe did", async () => {
    const traceback: ReproAssertion = {
      kind: "body_not_matches",
      step: "read",
      pattern: 'Traceback \\(most recent call last\\):?[\\s\\S]{0,4000}?File "[^"]+", line \\d+',
      message: "error answers must not carry stack traces",
    };
    expect(await fails("/trace", traceback)).toBe(true);
    expect(await fails("/clean", traceback)).toBe(false);
  });

  it("a body of the wrong type at the root is asserted as the document states it", async () => {
    // The document says a list; the server answers an object.
    const [assertion] = driftAssertions(
      [{ kind: "type", path: "(root)", message: "expected array, got object" }],
      "read",
    );
    expect(assertion).toMatchObject({ kind: "json_type", path: "", type: "array" });
    expect(await fails("/clean", assertion!)).toBe(true);
    expect(await fails("/list", assertion!)).toBe(false);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Operation } from "../../src/map/system-map.ts";
import { sendPrepared } from "../../src/probes/api/probe-support.ts";
import type { PreparedRequest } from "../../src/probes/api/request-builder.ts";
import { serializeBody, toSpec } from "../../src/probes/api/request-builder.ts";
import { WriteNotAllowedError } from "../../src/probes/http/http-client.ts";
import { openProbeRun } from "../../src/probes/session/probe-run.ts";
import { sendForm } from "../../src/probes/session/send-form.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import type { BrowserApp } from "./browser-app.ts";
import { startBrowserApp } from "./browser-app.ts";
import { ALICE, client, poolFor, setPasswords } from "./session-support.ts";

let app: BrowserApp;

beforeAll(async () => {
  app = await startBrowserApp();
  setPasswords();
});
afterAll(async () => {
  await app.close();
});

function formOperation(path: string, page: string, enctype?: string): Operation {
  return {
    method: "POST",
    path,
    security: "unknown",
    parameters: [],
    responses: {},
    seen_in: ["form"],
    documented: false,
    form: { page, enctype: enctype ?? "application/x-www-form-urlencoded" },
  };
}

const login = { login: { kind: "form", endpoint: "POST /session" } };

describe("form operations sent as a browser sends them", () => {
  it("loads the form's page for a fresh CSRF token, keeps the form's other fields, and follows the redirect", async () => {
    const pool = poolFor(app.baseUrl, login, [ALICE]);
    const http = client();
    const submission = await sendForm(pool, http, "alice", formOperation("/notes", "/notes/new"), {
      "note[title]": "qaas-title",
      // A stale token (as a map would have recorded it) is replaced by the page's fresh one.
      authenticity_token: "stale",
    });
    expect(submission.csrf).toEqual({ field: "authenticity_token", sent: true });
    expect(submission.page.map((exchange) => exchange.response?.status)).toEqual([200]);
    expect(
      submission.chain.map((exchange) => `${exchange.request.method} ${exchange.response?.status}`),
    ).toEqual(["POST 303", "GET 200"]);
    expect(submission.exchange.response?.body).toContain("qaas-title|plain|blue");
    expect(app.notes.at(-1)).toEqual({ user: "alice", title: "qaas-title|plain|blue", body: "draft" });
    expect(submission.chain[0]?.request.headers.referer).toBe(`${app.baseUrl}/notes/new`);
  });

  it("can leave the CSRF token out, to see whether the application refuses the submission", async () => {
    const pool = poolFor(app.baseUrl, login, [ALICE]);
    const before = app.notes.length;
    const submission = await sendForm(
      pool,
      client(),
      "alice",
      formOperation("/notes", "/notes/new"),
      { "note[title]": "forged" },
      { csrf: "omit" },
    );
    expect(submission.csrf).toEqual({ field: "authenticity_token", sent: false });
    expect(submission.exchange.response?.status).toBe(422);
    expect(app.notes.length).toBe(before);
  });

  it("sends a multipart form with a file as a small text part", async () => {
    const pool = poolFor(app.baseUrl, login, [ALICE]);
    const submission = await sendForm(
      pool,
      client(),
      "alice",
      formOperation("/upload", "/upload", "multipart/form-data"),
      {
        attachment: { filename: "qaas-note.txt", content: "qaas-file-marker" },
        caption: "hello",
      },
    );
    expect(submission.chain[0]?.request.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/);
    expect(submission.exchange.response?.body).toContain("Hello alice");
    expect(app.uploads.at(-1)).toEqual({
      user: "alice",
      filename: "qaas-note.txt",
      content: "qaas-file-marker",
    });
  });

  it("sends nothing when the target does not allow writes", async () => {
    const pool = poolFor(app.baseUrl, login, [ALICE]);
    const http = client({ writesAllowed: false });
    await expect(
      sendForm(pool, http, "alice", formOperation("/notes", "/notes/new"), {}),
    ).rejects.toBeInstanceOf(WriteNotAllowedError);
    expect(http.stats.sent).toBe(0);
  });
});

describe("request builder serialisation", () => {
  const operation = {
    ...formOperation("/upload", "/upload"),
    request_body: { content_type: "multipart/form-data", required: true },
  };

  it("serialises multipart bodies with a boundary the content type names, the same way each time", () => {
    const prepared: PreparedRequest = {
      operation,
      seed: "s1",
      pathValues: {},
      query: {},
      headers: {},
      body: { title: "a b", tags: ["x", "y"], file: { filename: "f.txt", content: "text" } },
      contentType: "multipart/form-data",
    };
    const spec = toSpec("http://127.0.0.1:9", prepared);
    const boundary = /boundary=(.+)$/.exec(spec.headers?.["content-type"] ?? "")?.[1];
    expect(boundary).toBeDefined();
    expect(spec.body).toBe(serializeBody(prepared));
    expect(spec.body).toBe(
      [
        `--${boundary}`,
        'Content-Disposition: form-data; name="title"',
        "",
        "a b",
        `--${boundary}`,
        'Content-Disposition: form-data; name="tags"',
        "",
        "x",
        `--${boundary}`,
        'Content-Disposition: form-data; name="tags"',
        "",
        "y",
        `--${boundary}`,
        'Content-Disposition: form-data; name="file"; filename="f.txt"',
        "Content-Type: text/plain",
        "",
        "text",
        `--${boundary}--`,
        "",
      ].join("\r\n"),
    );
  });

  it("keeps urlencoded and JSON bodies as before, repeating a name for each item of a list", () => {
    const base = { operation, pathValues: {}, query: {}, headers: {} };
    expect(
      serializeBody({
        ...base,
        body: { q: "a&b", n: 3, list: ["x", "y"] },
        contentType: "application/x-www-form-urlencoded",
      }),
    ).toBe("q=a%26b&n=3&list=x&list=y");
    expect(serializeBody({ ...base, body: { q: 1 }, contentType: "application/json" })).toBe('{"q":1}');
  });

  it("sends a probe's prepared request to a CSRF-guarded form with the page's fresh token", async () => {
    const profile = profileFor({
      name: "forms",
      source: {},
      environment: { mode: "managed", base_url: app.baseUrl },
      auth: login,
      users: [ALICE],
    });
    const run = openProbeRun(
      probeContext({
        profile,
        map: systemMapFor({
          target: "forms",
          baseUrl: app.baseUrl,
          document: { openapi: "3.0.3", paths: {} },
        }),
      }),
      "test",
    );
    if (typeof run === "string") throw new Error(run);
    const guarded = formOperation("/notes", "/notes/new");
    guarded.form = {
      page: "/notes/new",
      enctype: "application/x-www-form-urlencoded",
      csrf_field: "authenticity_token",
    };
    guarded.request_body = { content_type: "application/x-www-form-urlencoded", required: true };
    const prepared: PreparedRequest = {
      operation: guarded,
      pathValues: {},
      query: {},
      headers: {},
      body: { "note[title]": "probe-value" },
    };
    // As the request builder prepares it: with the Accept header every request carries.
    const exchange = await sendPrepared(run, "alice", {
      ...prepared,
      headers: { accept: "application/json, text/html;q=0.9, */*;q=0.8" },
    });
    // The submission itself, not where its redirect lands: a probe judges the application's answer to it.
    expect(`${exchange?.request.method} ${exchange?.response?.status}`).toBe("POST 303");
    expect(app.notes.at(-1)?.title).toContain("probe-value");
    // A request the form could not produce (an extra header) goes as written, and the token check refuses it.
    const before = app.notes.length;
    const raw = await sendPrepared(run, "alice", { ...prepared, headers: { "x-probe": "1" } });
    expect(raw?.response?.status).toBe(422);
    expect(app.notes.length).toBe(before);
  });
});

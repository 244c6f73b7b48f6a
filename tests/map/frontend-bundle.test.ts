import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findApiCalls } from "../../src/probes/frontend/api-calls.ts";
import { candidatesFromApiCalls } from "../../src/probes/frontend/frontend-candidates.ts";
import { readFrontend } from "../../src/probes/frontend/read-frontend.ts";
import { scriptProgram } from "../../src/probes/frontend/script-program.ts";
import { urlTemplate } from "../../src/probes/frontend/url-template.ts";
import { ANONYMOUS, crawlAsRoles } from "../../src/probes/pages/crawl-pages.ts";
import { type SpaServer, startSpaServer } from "./frontend-spa-server.ts";

let spa: SpaServer;

beforeAll(async () => {
  spa = await startSpaServer();
});

afterAll(() => spa.close());

/** Every request the storefront's code sends, whatever its parameters are called. */
const STOREFRONT = [
  "DELETE /api/basket/{}",
  "GET /api/basket",
  "GET /api/orders",
  "GET /api/orders/{}",
  "GET /api/products",
  "GET /api/products/{}",
  "GET /api/search",
  "GET /api/session",
  "PATCH /api/orders/{}/cancel",
  "POST /api/analytics/view",
  "POST /api/basket",
  "POST /api/feedback",
  "POST /api/newsletter",
  "POST /rest/user/login",
  "PUT /api/basket/{}",
];

const shapes = (calls: Array<{ method: string; path: string }>): string[] =>
  [...new Set(calls.map((call) => `${call.method} ${call.path.replace(/\{[^}]*\}/g, "{}")}`))].sort();

async function readFrom(entry: string) {
  const crawl = await crawlAsRoles(spa.baseUrl, entry, [ANONYMOUS]);
  return readFrontend(spa.baseUrl, crawl.pages);
}

describe("readFrontend", () => {
  it("reads the source map's original file when it is served: every call, with the authors' names", async () => {
    spa.serveMap = true;
    const reading = await readFrom("/");
    expect(reading.loaded.scripts).toEqual([
      {
        path: "/static/app.min.js",
        status: 200,
        chars: expect.any(Number),
        map: { path: "/static/app.min.js.map", status: 200, sources: 1, used: 1 },
      },
    ]);
    expect(reading.calls.every((call) => call.where.startsWith("/map/src/app.js:"))).toBe(true);
    expect(shapes(reading.calls)).toEqual(STOREFRONT);
    const paths = reading.calls.map((call) => call.path);
    expect(paths).toContain("/api/products/{productId}");
    expect(paths).toContain("/api/basket/{itemId}");
    expect(paths).toContain("/api/orders/{orderId}/cancel");
  });

  it("reads the minified bundle itself when there is no map, and finds the same calls", async () => {
    spa.serveMap = false;
    try {
      const reading = await readFrom("/");
      expect(reading.loaded.scripts[0]?.map).toEqual({
        path: "/static/app.min.js.map",
        status: 404,
        sources: 0,
        used: 0,
      });
      expect(reading.calls.every((call) => /^\/static\/app\.min\.js:\d+$/.test(call.where))).toBe(true);
      expect(shapes(reading.calls)).toEqual(STOREFRONT);
    } finally {
      spa.serveMap = true;
    }
  });

  it("reads plain scripts and inline ones, resolving a relative script path against its page", async () => {
    const reading = await readFrom("/plain");
    expect(reading.loaded.scripts.map((script) => script.path)).toEqual(["/static/app.js"]);
    expect(reading.loaded.inline).toBe(1);
    expect(shapes(reading.calls)).toEqual([...STOREFRONT, "DELETE /api/inline/ping"].sort());
  });

  it("turns calls into candidates with methods, query parameters and typed body fields", async () => {
    const { candidates } = await readFrom("/");
    const byKey = new Map(
      candidates.map((candidate) => [`${candidate.method} ${candidate.path}`, candidate]),
    );
    expect(candidates.every((candidate) => candidate.provenance === "frontend")).toBe(true);
    expect(byKey.get("POST /rest/user/login")?.request_body).toEqual({
      content_type: "application/json",
      required: true,
      schema: {
        type: "object",
        properties: { email: {}, password: {}, remember: { type: "boolean" } },
      },
    });
    // An axios-like instance's baseURL prefixes its paths; jQuery posts a form.
    expect(byKey.get("POST /api/basket")?.request_body?.schema).toEqual({
      type: "object",
      properties: { productId: {}, quantity: {} },
    });
    expect(byKey.get("POST /api/newsletter")?.request_body).toMatchObject({
      content_type: "application/x-www-form-urlencoded",
      schema: { properties: { email: {}, source: { type: "string" } } },
    });
    expect(byKey.get("PATCH /api/orders/{orderId}/cancel")?.request_body?.schema).toEqual({
      type: "object",
      properties: { reason: { type: "string" } },
    });
    expect(byKey.get("GET /api/search")?.parameters).toEqual([
      { name: "q", in: "query", required: false, schema: { type: "string" } },
    ]);
    expect(byKey.get("GET /api/products")?.parameters).toEqual([
      { name: "limit", in: "query", required: false, schema: { type: "string" }, example: "20" },
    ]);
    expect(byKey.get("GET /api/products/{productId}")?.concrete).toBe(false);
    expect(byKey.get("GET /api/basket")?.concrete).toBe(true);
  });
});

describe("findApiCalls", () => {
  const calls = (code: string) =>
    findApiCalls(scriptProgram([{ name: "/bundle.js", text: code, page: "/app/" }]), {
      baseUrl: "http://shop.test",
    });

  it("follows a wrapper's callers, constants, imports of objects and FormData fields", () => {
    const found = calls(`
      const BASE = "/api/v1";
      const settings = { endpoints: { users: BASE + "/users" } };
      function call(method, path, body) {
        return fetch(BASE + path, { method, body: body && JSON.stringify(body), headers: { "Content-Type": "application/json" } });
      }
      export const createTeam = (name) => call("POST", "/teams", { name, private: false });
      export const team = (teamId) => call("GET", \`/teams/\${teamId}\`);
      export const users = () => fetch(settings.endpoints.users);
      export function upload(file) {
        const form = new FormData();
        form.append("file", file);
        form.append("title", "x");
        return fetch("upload", { method: "POST", body: form });
      }
    `);
    expect(
      found.map((call) => [
        call.method,
        call.path,
        call.body?.contentType,
        JSON.stringify(call.body?.schema ?? null),
      ]),
    ).toEqual(
      expect.arrayContaining([
        [
          "POST",
          "/api/v1/teams",
          "application/json",
          '{"type":"object","properties":{"name":{},"private":{"type":"boolean"}}}',
        ],
        ["GET", "/api/v1/teams/{teamId}", undefined, "null"],
        ["GET", "/api/v1/users", undefined, "null"],
        // A relative URL resolves against the page that loads the script.
        [
          "POST",
          "/app/upload",
          "multipart/form-data",
          '{"type":"object","properties":{"file":{"type":"string"},"title":{"type":"string"}}}',
        ],
      ]),
    );
    expect(found).toHaveLength(4);
  });

  it("reads an Angular production chunk: class fields, a service method named like the client's, webpack modules", () => {
    const found = calls(
      `"use strict";(self.webpackChunkfrontend=self.webpackChunkfrontend||[]).push([[179],{1234:(e,t,n)=>{n.d(t,{N:()=>o});const o={production:!0,hostServer:".",port:3e3}},5678:(e,t,n)=>{n.d(t,{K:()=>a});var i=n(1234),r=n(9999);let a=(()=>{class s{http;hostServer=i.N.hostServer;host=this.hostServer+"/api/Users";constructor(c){this.http=c}find(c){return this.http.get(this.hostServer+"/rest/user/authentication-details/",{params:c}).pipe((0,r.U)(l=>l.data))}get(c){return this.http.get(\`\${this.host}/\${c}\`).pipe((0,r.U)(l=>l.data))}save(c){return this.http.post(this.host+"/",c).pipe((0,r.U)(l=>l.data))}changePassword(c){return this.http.get(this.hostServer+"/rest/user/change-password?current="+c.current+"&new="+c.new)}static \\u0275fac=function(l){return new(l||s)(r.LFG(r.eN))}}return s})()}}]);`,
    );
    expect(
      found.map((call) => `${call.method} ${call.path} ${call.query.map((entry) => entry.name).join(",")}`),
    ).toEqual([
      "GET /rest/user/authentication-details/ ",
      "GET /api/Users/{id} ",
      "GET /rest/user/change-password current,new",
      "POST /api/Users/ ",
    ]);
  });

  it("reads a React production bundle: a webpack-imported axios, its instance's baseURL, concat templates", () => {
    const found = calls(
      `(()=>{var e={1:(e,t,n)=>{e.exports=n(2)}},t={};function n(r){return t[r]||e[r](t[r]={exports:{}},t[r].exports,n),t[r].exports}var r=n(1),o=n.n(r);const a=o().create({baseURL:"/api/v1"});function s(e){return a.get("/todos/".concat(e))}function u(e){return a.post("/todos",{title:e.title,done:!1})}function l(){return fetch("/api/v1/me",{credentials:"include"}).then(e=>e.json())}function c(e){return o().delete("/api/v1/todos/"+e)}})();`,
    );
    expect(found.map((call) => `${call.method} ${call.path}`).sort()).toEqual([
      "DELETE /api/v1/todos/{id}",
      "GET /api/v1/me",
      "GET /api/v1/todos/{id}",
      "POST /api/v1/todos",
    ]);
    expect(found.find((call) => call.method === "POST")?.body?.schema).toEqual({
      type: "object",
      properties: { title: {}, done: { type: "boolean" } },
    });
  });

  it("leaves out what is not the target's API: other sites, map lookups, bare words", () => {
    const found = calls(`
      fetch("https://analytics.example.com/collect", { method: "POST" });
      const cache = new Map(); cache.get("/api/not-a-request-but-looks-like-one".length ? "key" : "x");
      new URLSearchParams(location.search).get("q");
      headers.delete("content-type");
      router.get("home");
      fetch(somewhere);
      fetch("http://localhost:3000/api/dev-host");
    `);
    expect(found.map((call) => `${call.method} ${call.path}`)).toEqual(["GET /api/dev-host"]);
  });
});

describe("candidatesFromApiCalls", () => {
  it("gives a call that sends a page's form that form's fields, page, CSRF field and roles", () => {
    const program = scriptProgram([
      {
        name: "/checkout#inline-1",
        page: "/checkout",
        text: `
          $("#order-form").submit(function (event) {
            event.preventDefault();
            $.ajax({ method: "post", url: "/orders", data: $("#order-form").serialize() });
          });
          document.getElementById("upload-form").onsubmit = () =>
            fetch("/avatar", { method: "POST", body: new FormData(document.getElementById("upload-form")) });
        `,
      },
    ]);
    const calls = findApiCalls(program, { baseUrl: "http://shop.test" });
    const form = (id: string, inputs: Array<{ name: string; type: string; required: boolean }>) => ({
      id,
      action: "/checkout",
      method: "GET",
      fields: inputs.map((input) => input.name),
      inputs,
    });
    const candidates = candidatesFromApiCalls(calls, [
      {
        path: "/checkout",
        roles: ["customer"],
        forms: [
          form("order-form", [
            { name: "_csrf", type: "hidden", required: false },
            { name: "quantity", type: "number", required: true },
          ]),
          form("upload-form", [{ name: "picture", type: "file", required: true }]),
        ],
      },
    ]);
    expect(candidates.find((candidate) => candidate.path === "/orders")).toEqual({
      method: "POST",
      path: "/orders",
      provenance: "frontend",
      concrete: true,
      roles: ["customer"],
      form: { page: "/checkout", enctype: "application/x-www-form-urlencoded", csrf_field: "_csrf" },
      request_body: {
        content_type: "application/x-www-form-urlencoded",
        required: true,
        schema: {
          type: "object",
          properties: { _csrf: { type: "string" }, quantity: { type: "number" } },
          required: ["quantity"],
        },
      },
    });
    expect(candidates.find((candidate) => candidate.path === "/avatar")?.request_body).toEqual({
      content_type: "multipart/form-data",
      required: true,
      schema: {
        type: "object",
        properties: { picture: { type: "string", format: "binary" } },
        required: ["picture"],
      },
    });
  });
});

describe("urlTemplate", () => {
  const page = new URL("http://shop.test/");
  it("drops a leading unknown base, names holes, and keeps the query's names", () => {
    expect(
      urlTemplate([{ hole: "hostServer" }, { literal: "/rest/products/search?q=" }, { hole: "q" }], page),
    ).toEqual({
      path: "/rest/products/search",
      query: [{ name: "q" }],
    });
    expect(
      urlTemplate([{ literal: "/api/users/" }, { hole: "e" }, { literal: "/posts/" }, { hole: "t" }], page),
    ).toEqual({
      path: "/api/users/{id}/posts/{id2}",
      query: [],
    });
    expect(urlTemplate([{ literal: "/api/items" }, { hole: "queryString" }], page)?.path).toBe("/api/items");
    expect(urlTemplate([{ literal: "/api/users/:userId" }], page)?.path).toBe("/api/users/{userId}");
    expect(urlTemplate([{ hole: "base" }], page)).toBeUndefined();
    expect(urlTemplate([{ literal: "/static/logo.png" }], page)).toBeUndefined();
  });
});

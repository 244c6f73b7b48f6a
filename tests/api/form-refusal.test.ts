import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page, SystemMap } from "../../src/map/system-map.ts";
import {
  probeContext,
  undocumentedMap,
  undocumentedPost,
  writableProfile,
} from "../fixtures/probe-harness.ts";
import { summarize } from "../fixtures/targets.ts";
import { fuzzCandidates } from "../support/fuzz-run.ts";
import { startTextServer, type TextServer } from "../support/text-server.ts";

// Two server-rendered forms whose nickname may be at most 20 characters. One refuses a longer one as
// Django, Spring MVC and older Rails do: a 200 showing the form again with the error beside the field. The
// other stores whatever it gets and says so. Only the second lacks the validation.

let server: TextServer;
let baseUrl: string;

const formPage = (path: string, error: string) =>
  `<h1>Nickname</h1><form method="post" action="${path}">${error ? `<ul class="errorlist"><li>${error}</li></ul>` : ""}<input name="nickname" maxlength="20" required><button>Save</button></form>`;

beforeAll(async () => {
  server = await startTextServer((request, text, response) => {
    const nickname = new URLSearchParams(text).get("nickname") ?? "";
    const html = (body: string) => {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      response.end(`<!doctype html><html><body>${body}</body></html>`);
    };
    if (request.method === "POST" && request.url === "/checked-nickname") {
      if (nickname === "" || nickname.length > 20)
        return html(formPage("/checked-nickname", "Ensure this value has at most 20 characters."));
      return html(`<p>Saved ${nickname.replace(/[<&>"]/g, "")}</p><a href="/">Home</a>`);
    }
    if (request.method === "POST" && request.url === "/stored-nickname")
      return html(`<p>Saved ${nickname.replace(/[<&>"]/g, "")}</p><a href="/">Home</a>`);
    response.writeHead(404);
    response.end();
  });
  baseUrl = server.baseUrl;
});
afterAll(() => server.close());

function nicknameMap(): SystemMap {
  const paths = ["/checked-nickname", "/stored-nickname"];
  const operations = paths.map((path) =>
    undocumentedPost(
      path,
      "application/x-www-form-urlencoded",
      { nickname: { type: "string", minLength: 1, maxLength: 20 } },
      ["nickname"],
    ),
  );
  const pages = paths.map(
    (path) =>
      ({
        path: `${path}/edit`,
        status: 200,
        html: true,
        links: [],
        forms: [
          {
            action: path,
            method: "POST",
            fields: ["nickname"],
            inputs: [{ name: "nickname", type: "text", required: true, maxlength: 20 }],
          },
        ],
      }) as Page,
  );
  return { ...undocumentedMap("nicknames", baseUrl, operations), pages };
}

describe("fuzz_operation on server-rendered forms", () => {
  it("reads the form shown again as a refusal, and reports only the handler that stores the long value", async () => {
    const context = probeContext({ profile: writableProfile("nicknames", baseUrl), map: nicknameMap() });
    const found = summarize(await fuzzCandidates(context));
    expect(found.filter((line) => line.includes("/stored-nickname"))).toContain(
      "validation-missing POST /stored-nickname [body:nickname]",
    );
    expect(found.filter((line) => line.includes("/checked-nickname"))).toEqual([]);
  });
});

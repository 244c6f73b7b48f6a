import { describe, expect, it } from "vitest";
import { signature } from "../../src/probes/auditor/response-signature.ts";
import type { HttpExchange } from "../../src/probes/http/http-types.ts";

function page(status: number, body: string): HttpExchange {
  return {
    request: { method: "GET", url: "http://app.test/account/x", headers: {} },
    response: { status, headers: {}, setCookies: [], contentType: "text/html", body, json: undefined },
    durationMs: 3,
  } as unknown as HttpExchange;
}

const shell = (notice: string, rows: string) =>
  `<html><body><main>${notice}<h1>Results</h1><ul>${rows}</ul></main></body></html>`;

describe("the signature two answers are compared by", () => {
  it("leaves out a one-time notice another request of the shared session left for this page", () => {
    const plain = page(404, shell("", ""));
    const flashed = page(
      404,
      shell('<p class="flash" role="status">Booked. We charged your card on file.</p>', ""),
    );
    const toast = page(404, shell('<div class="alert alert-success">Saved</div>', ""));
    expect(signature(flashed, [])).toBe(signature(plain, []));
    expect(signature(toast, [])).toBe(signature(plain, []));
  });

  it("still tells apart answers whose content differs", () => {
    const none = page(200, shell("", ""));
    const rows = page(200, shell("", "<li>Ann</li><li>Bob</li>"));
    expect(signature(rows, [])).not.toBe(signature(none, []));
  });

  it("takes the echoed input out however the template escaped its quotes", () => {
    const value = `qaas'||'`;
    const searched = (echo: string) =>
      page(200, shell(`<form><input name="q" value="${echo}"></form>`, "<li>Printer offline</li>"));
    const plain = signature(searched(""), [value]);
    for (const echo of ["qaas&#39;||&#39;", "qaas&#039;||&#039;", "qaas&#x27;||&#x27;", "qaas&apos;||&apos;"])
      expect(signature(searched(echo), [value]), echo).toBe(plain);
    expect(signature(searched(`x&#34;y`), [`x"y`])).toBe(plain);
  });
});

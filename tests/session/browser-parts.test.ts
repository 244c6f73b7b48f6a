import { describe, expect, it } from "vitest";
import { Masker } from "../../src/probes/http/masking.ts";
import { CookieJar } from "../../src/probes/session/cookie-jar.ts";
import { csrfControl, csrfHeader, metaCsrf } from "../../src/probes/session/csrf.ts";
import { samePath } from "../../src/probes/session/form-submission.ts";
import { formDefaults, parseHtmlPage } from "../../src/probes/session/html-forms.ts";

describe("cookie jar", () => {
  it("replaces, scopes by path, expires and deletes cookies as a browser does", () => {
    let now = 1_000_000;
    const jar = new CookieJar(() => now);
    expect(
      jar.absorb(
        ["sid=one; Path=/; HttpOnly", "admin_pref=x; Path=/admin", "short=1; Max-Age=10"],
        "http://h/login",
      ),
    ).toEqual(["sid", "admin_pref", "short"]);
    expect(jar.header("http://h/admin/users")).toBe("admin_pref=x; sid=one; short=1");
    expect(jar.header("http://h/administrator")).toBe("sid=one; short=1");
    expect(jar.absorb(["sid=two; Path=/"], "http://h/x")).toEqual(["sid"]);
    expect(jar.absorb(["sid=two; Path=/"], "http://h/x")).toEqual([]);
    now += 11_000;
    expect(jar.values()).toEqual({ sid: "two", admin_pref: "x" });
    jar.absorb(["sid=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT"], "http://h/logout");
    expect(jar.values("http://h/")).toEqual({});
    // Without a Path, a cookie belongs to the folder of the page that set it.
    jar.absorb(["cart=3"], "http://h/shop/item");
    expect(jar.get("cart", "http://h/shop/other")).toBe("3");
    expect(jar.get("cart", "http://h/")).toBeUndefined();
  });
});

describe("HTML forms and CSRF tokens", () => {
  const html = `<html><head><meta name="csrf-token" content="meta-token-123"><meta name="csrf-param" content="authenticity_token"></head>
  <body><form action="/items?x=1" method="POST" enctype="multipart/form-data">
    <input type="hidden" name="authenticity_token" value="field-token-456">
    <input name="title" value="pre &amp; filled">
    <input type="checkbox" name="public" value="yes" checked><input type="checkbox" name="draft">
    <input type="radio" name="size" value="s"><input type="radio" name="size" value="m" checked>
    <select name="color"><option>red</option><option value="b" selected>blue</option></select>
    <select name="shape"><option value="sq">square</option><option value="ci">circle</option></select>
    <textarea name="body">hello</textarea><input type="file" name="doc"><input type="submit" value="Go">
  </form><form><input type="password" name="pw"></form><div class="alert">Saved!</div></body></html>`;

  it("reads the fields a browser would submit with their current values", () => {
    const page = parseHtmlPage(html, "http://h/items/new");
    const [form, second] = page.forms;
    expect(form?.action).toBe("http://h/items?x=1");
    expect(form?.method).toBe("POST");
    expect(form?.enctype).toBe("multipart/form-data");
    expect(formDefaults(form!)).toEqual([
      ["authenticity_token", "field-token-456"],
      ["title", "pre & filled"],
      ["public", "yes"],
      ["size", "m"],
      ["color", "b"],
      ["shape", "sq"],
      ["body", "hello"],
    ]);
    expect(second?.action).toBe("http://h/items/new");
    expect(page.messages).toEqual(["Saved!"]);
    expect(csrfControl(form!)?.name).toBe("authenticity_token");
    expect(metaCsrf(page.meta)).toEqual({
      token: "meta-token-123",
      param: "authenticity_token",
      header: undefined,
    });
  });

  it("echoes a CSRF cookie in the header its framework expects, else the meta token", () => {
    const jar = new CookieJar();
    jar.absorb(["_csrf=secret-not-a-token; Path=/"], "http://h/");
    expect(csrfHeader(jar, "http://h/x", { token: "m" })).toEqual({ name: "X-CSRF-Token", value: "m" });
    jar.absorb(["csrftoken=abc; Path=/"], "http://h/");
    expect(csrfHeader(jar, "http://h/x", undefined)).toEqual({ name: "X-CSRFToken", value: "abc" });
    const angular = new CookieJar();
    angular.absorb(["XSRF-TOKEN=a%2Bb%3D; Path=/"], "http://h/");
    expect(csrfHeader(angular, "http://h/x", undefined)).toEqual({ name: "X-XSRF-TOKEN", value: "a+b=" });
  });

  it("matches a form's action against an operation's path template", () => {
    expect(samePath("/items/{id}/edit", "/items/42/edit")).toBe(true);
    expect(samePath("/items/:id", "/items/42/")).toBe(true);
    expect(samePath("/items/{id}", "/items/42/edit")).toBe(false);
  });
});

describe("masking form bodies", () => {
  it("masks bracketed and multipart password fields by name", () => {
    const masker = new Masker();
    expect(masker.maskBody("user%5Blogin%5D=alice&user%5Bpassword%5D=hunter22&_csrf=tok123456")).toBe(
      "user%5Blogin%5D=alice&user%5Bpassword%5D=hu%E2%80%A6%5Bmasked%206%20chars%5D&_csrf=to%E2%80%A6%5Bmasked%207%20chars%5D",
    );
    const multipart =
      '--b\r\nContent-Disposition: form-data; name="password"\r\n\r\nhunter22\r\n--b\r\nContent-Disposition: form-data; name="note"\r\n\r\nhi\r\n--b--\r\n';
    const masked = masker.maskBody(multipart);
    expect(masked).not.toContain("hunter22");
    expect(masked).toContain("\r\n\r\nhi\r\n");
  });
});

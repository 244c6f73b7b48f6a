import { describe, expect, it } from "vitest";
import { disclosuresIn } from "../../src/probes/auditor/exposure-errors.ts";
import { privateFieldsIn } from "../../src/probes/auditor/exposure-excessive.ts";
import { hashFormatOf, passwordsInJson } from "../../src/probes/auditor/exposure-hashes.ts";
import { secretsInJson, shapedSecretsIn } from "../../src/probes/auditor/exposure-secrets.ts";
import { judgeFileContent } from "../../src/probes/auditor/misconfig-file-content.ts";

// The judgements scan_exposure and check_misconfiguration make on one answer, each with a look-alike
// that must not count: the structure of a trace against a message that mentions one, a hash's format
// against a random id, a secret-named field of key material against a CSRF token or a masked hint.

describe("error disclosures", () => {
  it("recognises traces of several stacks and the SQL a server ran", () => {
    const python =
      'Traceback (most recent call last):\n  File "/srv/app.py", line 41, in show\n    row = db.execute(q)\nsqlite3.OperationalError: near "x": syntax error';
    const node =
      "TypeError: Cannot read properties of undefined (reading 'id')\n    at show (/srv/app/routes.js:12:19)\n    at Layer.handle (/srv/node_modules/express/lib/router/layer.js:95:5)";
    const java =
      "java.lang.NullPointerException\n\tat com.shop.OrderController.show(OrderController.java:57)\n\tat sun.reflect.NativeMethodAccessorImpl.invoke(Native Method)";
    const php =
      "<b>Fatal error</b>:  Uncaught Error: Call to a member function on null in <b>/var/www/index.php</b> on line <b>7</b>";
    const sql = '{"error":"query failed: SELECT id, title FROM notes WHERE owner = \'x\'\'"}';
    expect(disclosuresIn(python).map((found) => found.kind)).toContain("stack-trace");
    expect(disclosuresIn(node).map((found) => found.what)).toContain("Node.js stack trace");
    expect(disclosuresIn(java).map((found) => found.what)).toContain("Java stack trace");
    expect(disclosuresIn(php).map((found) => found.what)).toContain("PHP error");
    expect(disclosuresIn(sql, JSON.parse(sql)).map((found) => found.kind)).toContain("sql-text");
  });

  it("recognises the debug pages of frameworks whose frames are markup, not a plain trace", () => {
    // Starlette (FastAPI with debug=True) answers a browser-like Accept with its own page; its frames are
    // spans, so no plain-text trace signature sees them.
    const starlette = `<html><head><title>Starlette Debugger</title></head><body><h1>500 Server Error</h1>
      <div class="traceback-container"><p class="traceback-title">Traceback</p>
      <p class="frame-title">File <span class="frame-filename">/srv/app/main.py</span>, line <i>12</i>, in <b>show</b></p>`;
    const aspnetCore = `<h1>An unhandled exception occurred while processing the request.</h1>
      <div class="titleerror">NullReferenceException: Object reference not set to an instance of an object.</div>
      <ul id="stackpage" class="page"><li><h2 class="stackerror">Shop.Controllers.OrdersController.Show(int id)</h2>`;
    const symfony = `<div class="exception-message-wrapper"><h1 class="break-long exception-message">No route</h1>
      <span class="trace-class">Symfony\\Component\\HttpKernel\\Exception\\NotFoundHttpException</span>`;
    expect(disclosuresIn(starlette).map((found) => found.what)).toContain("Starlette debugger");
    expect(disclosuresIn(aspnetCore).map((found) => found.what)).toContain("ASP.NET Core developer page");
    expect(disclosuresIn(symfony).map((found) => found.what)).toContain("Symfony exception page");
  });

  it("leaves plain error messages alone", () => {
    for (const body of [
      '{"error":"invalid id: expected an integer"}',
      '{"error":"Internal Server Error"}',
      '{"message":"Select a file from your library"}',
      "<html><title>500</title><p>Something went wrong at our end. Error id 4f2a.</p></html>",
      "<html><title>Error</title><h1>An unhandled exception occurred. Please try again later.</h1></html>",
    ])
      expect(disclosuresIn(body)).toEqual([]);
  });
});

describe("password hashes", () => {
  it("tells every common hash format by its shape, and a digest by its field", () => {
    expect(hashFormatOf("$2b$12$C6UzMDM.H6dfI/f/IKxGhuJeQ4jEk3ldTE2vzp0BJ1W0XyTDfKZaW")).toBe("bcrypt");
    expect(hashFormatOf("$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG")).toBe(
      "argon2",
    );
    expect(
      hashFormatOf(
        "pbkdf2:sha256:600000$Xb3kR1$0c9b1e6f3a5d7c2e8f4a6b1d3e5f7a9c0b2d4f6e8a1c3e5f7a9b0d2c4e6f8a1b",
      ),
    ).toBe("pbkdf2");
    expect(
      hashFormatOf("scrypt$16384$GH7yrcdp2kPrGJWyojxebA$qCbIhd7UjXD5iV4rQBtII61fkG0mE57QGXWQlG4ULQM"),
    ).toBe("scrypt");
    // A hash-named field holding hash material of a format no list names is still a password hash.
    expect(
      passwordsInJson({ password_hash: "v9:Zk3q8Lr2Xw7Tn4Pb6Yc1Hs5Jm0Gd:Qa8Wf3Ne6Ru1Ti4Oy7Bv2Lx9Kc5" }).map(
        (found) => found.kind,
      ),
    ).toEqual(["hash"]);
    expect(passwordsInJson({ password_hash: "not-set" })).toEqual([]);
    const digest = "5f4dcc3b5aa765d61d8327deb882cf99";
    expect(passwordsInJson({ id: 1, password_hash: digest }).map((found) => found.kind)).toEqual(["digest"]);
    // The same 32 hex characters under an ordinary name are a request id, not a password.
    expect(passwordsInJson({ id: 1, request_id: digest })).toEqual([]);
    expect(passwordsInJson({ password: "********", password_set: true })).toEqual([]);
  });
});

describe("secrets", () => {
  it("finds key material under secret names and known shapes anywhere", () => {
    const found = secretsInJson({
      name: "billing",
      api_key: "q8Zr2LxP0vN7tKd4Wm9Yb3Hc6Fj1Sg5A",
      note: "uses postgresql://app:S3cr3tPw@db.internal:5432/shop",
    });
    expect(found.map((secret) => secret.path).sort()).toEqual(["api_key", "note"]);
    expect(shapedSecretsIn("key AKIAIOSFODNN7EXAMPLE here").map((secret) => secret.what)).toEqual([
      "AWS access key",
    ]);
  });

  it("ignores public keys, CSRF tokens, masked hints and low-entropy values", () => {
    expect(
      secretsInJson({
        publishable_key: "pk_live_51HqLyjWDarjtT1zdp7dc",
        csrf_token: "q8Zr2LxP0vN7tKd4Wm9Yb3Hc6Fj1Sg5A",
        api_key_hint: "****g5A",
        token: "aaaaaaaaaaaaaaaaaaaaaaaa",
        note: "postgresql://app:<password>@db/shop",
      }),
    ).toEqual([]);
  });
});

describe("excessive data", () => {
  it("lists private fields the documented answer leaves out, and not the declared ones", () => {
    const schema = {
      type: "array",
      items: { type: "object", properties: { id: { type: "integer" }, name: { type: "string" } } },
    };
    const answer = [
      { id: 1, name: "Ann", ssn: "123-45-6789", phone: "+1 555 0100" },
      { id: 2, name: "Bo", ssn: "987-65-4321", phone: "+1 555 0101" },
    ];
    const fields = privateFieldsIn(answer, schema);
    expect(fields.filter((field) => field.declared === false).map((field) => field.key)).toEqual(
      expect.arrayContaining(["ssn", "phone"]),
    );
    expect(privateFieldsIn([{ id: 1, name: "Ann" }], schema)).toEqual([]);
  });
});

describe("served files", () => {
  it("recognises an environment file, a git config and an SQL dump by content", () => {
    expect(
      judgeFileContent("/.env", "APP_ENV=prod\nSECRET_KEY=q8Zr2LxP0vN7tKd4\nPORT=80\n", "text/plain")?.kind,
    ).toBe("environment file");
    expect(
      judgeFileContent(
        "/.git/config",
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n",
        "text/plain",
      )?.kind,
    ).toBe("vcs metadata");
    expect(
      judgeFileContent(
        "/backup.sql",
        "-- dump\nCREATE TABLE users (id integer, email text);\nINSERT INTO users VALUES (1,'a@b.c');\n",
        "application/sql",
      )?.kind,
    ).toBe("sql dump");
  });

  it("does not call an HTML page, a JSON answer or prose a sensitive file", () => {
    expect(
      judgeFileContent("/.env", "<!doctype html><html><body>Shop</body></html>", "text/html"),
    ).toBeUndefined();
    expect(
      judgeFileContent("/backup.sql", "This page explains how to back up your data.", "text/plain"),
    ).toBeUndefined();
    expect(judgeFileContent("/.git/config", '{"error":"not found"}', "application/json")).toBeUndefined();
  });
});

import type { Row } from "../../model/row.ts";
import { brief, verdict } from "../../oracles/oracle.ts";
import { methodFor, placed } from "../../oracles/placing.ts";
import { inputBody, inputParam, nodeUserRoute, pyRoute, readInput } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { err, guarded, json, obj, STR } from "../schemas.ts";

// Input that names a resource the server then reads: a file path (CWE-22), an XML external entity
// (CWE-611), a URL the server fetches (CWE-918). Harmless by construction: file sinks read only inside the
// corpus tree (support's readInsideCorpus) and the fetcher reaches loopback only (fetchLoopback). The
// oracles therefore aim at what the app itself ships and at a loopback listener.

export interface PathTraversalKnobs {
  input: "query" | "path";
  /** Vulnerable rows: no check, a one-pass `../` strip, or a prefix test on the unnormalised path. */
  check?: "none" | "strip-once" | "prefix-unnormalised";
  /** Safe rows: the resolved path must stay in the folder, or only the base name is used. */
  guard?: "resolved-check" | "basename";
}

export type XxeKnobs = Record<string, never>;

export interface SsrfKnobs {
  input: "json" | "query";
  /** The URL as one input, or assembled from scheme, host, port and path inputs (import-from-a-server forms). */
  shape?: "url" | "parts";
  /** Vulnerable rows: the fetched body comes back, or only that the fetch happened. */
  reflect?: "full" | "blind";
  /** Safe rows: only an allow-listed host is accepted (and never fetched here), or the URL is only stored. */
  guard?: "allow-list" | "stored-only";
}

export const SHIPPED_FILES: Record<string, string> = {
  "files/docs/readme.txt": "Corpus documents: start with the guide.\n",
  "files/docs/guide.txt": "Corpus guide: every document here is public.\n",
};

export function buildPathTraversal(row: Row<PathTraversalKnobs>, ctx: BuildContext): Built {
  const { input, check = "none", guard = "resolved-check" } = row.knobs;
  const vulnerable = row.label === "vulnerable";
  const prefixed = vulnerable && check === "prefix-unnormalised";
  const path = input === "path" ? `${ctx.place.base}/documents/{name}` : `${ctx.place.base}/download`;
  const folder = prefixed ? '"files"' : '"files", "docs"';
  const pyFolder = prefixed ? '"files"' : '"files", "docs"';
  const read = {
    node: input === "path" ? 'String(request.params["name"])' : readInput("node", "query", "file"),
    python: input === "path" ? "str(name)" : readInput("python", "query", "file"),
  };
  let node: string;
  let python: string;
  if (vulnerable) {
    const prepare = {
      none: { node: "", python: "" },
      "strip-once": {
        node: 'name = name.replaceAll("../", "");\n',
        python: 'name = name.replace("../", "")\n',
      },
      "prefix-unnormalised": {
        node: 'if (!name.startsWith("docs/")) return reply.code(404).send({ error: "not found" });\n',
        python: 'if not name.startswith("docs/"):\n    return jsonify(error="not found"), 404\n',
      },
    }[check];
    node = `${prepare.node}const content = readInsideCorpus(path.join(HERE, ${folder}, name));`;
    python = `${prepare.python}content = read_inside_corpus(os.path.join(HERE, ${pyFolder}, name))`;
  } else if (guard === "resolved-check") {
    node = `const base = path.join(HERE, "files", "docs");
const target = path.resolve(base, name);
if (!target.startsWith(base + path.sep)) return reply.code(404).send({ error: "not found" });
const content = readInsideCorpus(target);`;
    python = `base = os.path.join(HERE, "files", "docs")
target = os.path.realpath(os.path.join(base, name))
if not target.startswith(base + os.sep):
    return jsonify(error="not found"), 404
content = read_inside_corpus(target)`;
  } else {
    node = 'const content = readInsideCorpus(path.join(HERE, "files", "docs", path.basename(name)));';
    python = 'content = read_inside_corpus(os.path.join(HERE, "files", "docs", os.path.basename(name)))';
  }
  const endpoint: Endpoint = {
    method: "GET",
    path,
    summary: `Download a ${ctx.place.singular} document`,
    access: "user",
    parameters:
      input === "path"
        ? [{ name: "name", in: "path", required: true, schema: STR }]
        : inputParam("query", "file", STR),
    responses: {
      "200": { description: "the document", contentType: "text/plain", schema: STR },
      "404": err("no such document"),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "GET",
      path,
      `let name = ${read.node};
${node}
if (content === undefined) return reply.code(404).send({ error: "not found" });
return reply.type("text/plain; charset=utf-8").send(content);`,
    ),
    python: pyRoute(
      "GET",
      input === "path" ? path.replace("{name}", "{name}") : path,
      `require_user()
name = ${read.python}
${python}
if content is None:
    return jsonify(error="not found"), 404
return content, 200, {"Content-Type": "text/plain; charset=utf-8"}`,
    ),
  };
  if (input === "path") endpoint.python = endpoint.python.replace(`<name>"`, `<path:name>"`);
  const app = ctx.server.stack === "node" ? "app.mjs" : "app.py";
  const attempts = [`../../${app}`, `....//....//${app}`, `docs/../../${app}`, `..%2f..%2f${app}`];
  return {
    endpoint,
    files: SHIPPED_FILES,
    title: vulnerable
      ? `Path traversal through the ${input === "path" ? "path segment {name}" : "query parameter file"} (${check === "none" ? "no check" : check === "strip-once" ? "../ stripped once" : "prefix tested before normalising"})`
      : `Documents are read by a name from the ${input}`,
    ...(vulnerable
      ? {}
      : {
          why:
            guard === "resolved-check"
              ? "the resolved path must stay inside files/docs"
              : "only the base name of the input is used",
        }),
    oracle: async (client) => {
      for (const attempt of attempts) {
        const value =
          input === "path" ? attempt.replaceAll("/", "%2F") : attempt.replace("%2f", "/").replace("%2f", "/");
        const answer =
          input === "path"
            ? await client.ask({ as: "alice", path: path.replace("{name}", value) })
            : await client.ask(placed({ as: "alice", path }, "query", "file", value));
        if (answer.text.includes("Generated by corpus/generator"))
          return verdict(true, `${attempt} → the app's source`);
      }
      const normal = await client.ask(
        input === "path"
          ? { as: "alice", path: path.replace("{name}", "readme.txt") }
          : { as: "alice", path, query: { file: "readme.txt" } },
      );
      return verdict(false, `no attempt left the folder; readme → ${brief(normal)}`);
    },
  };
}

export function buildXxe(row: Row<XxeKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const path = `${ctx.place.base}/import`;
  const endpoint: Endpoint = {
    method: "POST",
    path,
    summary: `Import a ${ctx.place.singular} from XML`,
    access: "user",
    body: { contentType: "application/xml", schema: STR, required: true },
    responses: {
      "200": json("what was read", obj({ imported: { type: "object" } })),
      "400": err("not readable XML"),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "POST",
      path,
      `let fields;
try {
  fields = parseXml(String(request.body ?? ""), { resolveExternal: ${vulnerable} });
} catch {
  return reply.code(400).send({ error: "not readable XML" });
}
return { imported: fields };`,
    ),
    python: pyRoute(
      "POST",
      path,
      `require_user()
try:
    fields = parse_xml(request.get_data(as_text=True), resolve_entities=${vulnerable ? "True" : "False"})
except Exception:
    return jsonify(error="not readable XML"), 400
return jsonify(imported=fields)`,
    ),
  };
  return {
    endpoint,
    files: SHIPPED_FILES,
    title: vulnerable ? "XML import resolves external entities (XXE)" : "XML import parses client XML",
    ...(vulnerable ? {} : { why: "the parser neither loads the DTD nor resolves entities" }),
    oracle: async (client) => {
      const file = `${client.corpusRoot}/servers/${client.server.name}/files/docs/readme.txt`;
      const body = `<?xml version="1.0"?><!DOCTYPE item [<!ENTITY doc SYSTEM "file://${file}">]><item><title>&doc;</title></item>`;
      const answer = await client.ask({
        as: "alice",
        method: "POST",
        path,
        body,
        contentType: "application/xml",
      });
      return verdict(answer.text.includes("Corpus documents"), brief(answer));
    },
  };
}

export function buildSsrf(row: Row<SsrfKnobs>, ctx: BuildContext): Built {
  if (row.knobs.shape === "parts") return buildSsrfFromParts(row, ctx);
  const { input, reflect = "full", guard = "allow-list" } = row.knobs;
  const vulnerable = row.label === "vulnerable";
  const method = methodFor(input);
  const path = `${ctx.place.base}/${input === "json" ? "fetch" : "preview"}`;
  const read = { node: readInput("node", input, "url"), python: readInput("python", input, "url") };
  let node: string;
  let python: string;
  if (vulnerable) {
    const check = {
      node: 'if (!/^https?:\\/\\//.test(url)) return reply.code(400).send({ error: "url must be http(s)" });\n',
      python: 'if not re.match(r"https?://", url):\n    return jsonify(error="url must be http(s)"), 400\n',
    };
    node =
      check.node +
      (reflect === "full"
        ? "const got = await fetchLoopback(url);\nreturn { status: got.status, body: got.text };"
        : "await fetchLoopback(url);\nreturn { queued: true };");
    python =
      check.python +
      (reflect === "full"
        ? "ok, status, text = fetch_loopback(url)\nreturn jsonify(status=status, body=text)"
        : "fetch_loopback(url)\nreturn jsonify(queued=True)");
  } else if (guard === "allow-list") {
    node = `if (!url.startsWith("https://images.corpus.test/")) return reply.code(400).send({ error: "only images.corpus.test may be fetched" });
return { queued: true };`;
    python = `if not url.startswith("https://images.corpus.test/"):
    return jsonify(error="only images.corpus.test may be fetched"), 400
return jsonify(queued=True)`;
  } else {
    node =
      'if (!/^https?:\\/\\//.test(url)) return reply.code(400).send({ error: "url must be http(s)" });\nreturn { queued: true, webhook: url };';
    python =
      'if not re.match(r"https?://", url):\n    return jsonify(error="url must be http(s)"), 400\nreturn jsonify(queued=True, webhook=url)';
  }
  const endpoint: Endpoint = {
    method,
    path,
    summary: input === "json" ? "Attach a picture from a URL" : "Preview a link",
    access: "user",
    parameters: inputParam(input, "url", { type: "string", format: "uri" }, false),
    ...(inputBody(input, { url: { type: "string", format: "uri" } }, [])
      ? { body: inputBody(input, { url: { type: "string", format: "uri" } }, []) }
      : {}),
    responses: {
      "200": json("fetched or queued", { type: "object" }),
      "400": err("the URL is not acceptable"),
      ...guarded("user"),
    },
    node: nodeUserRoute(method, path, `const url = ${read.node};\n${node}`),
    python: pyRoute(method, path, `require_user()\nurl = ${read.python}\n${python}`),
  };
  return {
    endpoint,
    title: vulnerable
      ? `Server-side request forgery through the ${input} field url (${reflect === "full" ? "the answer carries the fetched body" : "blind"})`
      : `The server takes a URL from the ${input}`,
    ...(vulnerable
      ? {}
      : {
          why:
            guard === "allow-list"
              ? "only an allow-listed host is accepted; nothing else is fetched"
              : "the URL is stored as a webhook, never fetched here",
        }),
    oracle: async (client) => {
      const tag = `t${Math.random().toString(36).slice(2, 10)}`;
      const answer = await client.ask(
        placed({ as: "alice", method, path }, input, "url", client.listener.url(tag)),
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      return verdict(
        client.listener.hits(tag) > 0,
        `listener hits ${client.listener.hits(tag)}; ${brief(answer)}`,
      );
    },
  };
}

const URL_PARTS = ["scheme", "host", "port", "path"] as const;

/** The fetched URL assembled from its parts; the safe look-alike accepts one allow-listed host only. */
function buildSsrfFromParts(row: Row<SsrfKnobs>, ctx: BuildContext): Built {
  const { input, reflect = "full" } = row.knobs;
  const vulnerable = row.label === "vulnerable";
  const method = methodFor(input);
  const path = `${ctx.place.base}/mirror`;
  const properties = {
    scheme: { type: "string" },
    host: { type: "string" },
    port: { type: "integer" },
    path: { type: "string" },
  };
  const reads = (stack: "node" | "python") =>
    URL_PARTS.map((part) => `${part}_ = ${readInput(stack, input, part)}`);
  const node = vulnerable
    ? `const url = \`\${scheme_}://\${host_}:\${port_}\${path_}\`;\n${
        reflect === "full"
          ? "const got = await fetchLoopback(url);\nreturn { status: got.status, body: got.text };"
          : "await fetchLoopback(url);\nreturn { queued: true };"
      }`
    : 'if (host_ !== "mirror.corpus.test") return reply.code(400).send({ error: "only mirror.corpus.test may be mirrored" });\nreturn { queued: true };';
  const python = vulnerable
    ? `url = f"{scheme_}://{host_}:{port_}{path_}"\n${
        reflect === "full"
          ? "ok, status, text = fetch_loopback(url)\nreturn jsonify(status=status, body=text)"
          : "fetch_loopback(url)\nreturn jsonify(queued=True)"
      }`
    : 'if host_ != "mirror.corpus.test":\n    return jsonify(error="only mirror.corpus.test may be mirrored"), 400\nreturn jsonify(queued=True)';
  const body = inputBody(input, properties, [...URL_PARTS]);
  const endpoint: Endpoint = {
    method,
    path,
    summary: "Mirror a file from another server",
    access: "user",
    parameters: URL_PARTS.flatMap((part) => inputParam(input, part, properties[part], true)),
    ...(body ? { body } : {}),
    responses: {
      "200": json("fetched or queued", { type: "object" }),
      "400": err("the server is not acceptable"),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      method,
      path,
      `${reads("node")
        .map((line) => `const ${line};`)
        .join("\n")}\n${node}`,
    ),
    python: pyRoute(method, path, `require_user()\n${reads("python").join("\n")}\n${python}`),
  };
  return {
    endpoint,
    title: vulnerable
      ? `Server-side request forgery through a URL assembled from the ${input} fields scheme, host, port and path`
      : `The server mirrors from one allow-listed host named in the ${input}`,
    ...(vulnerable ? {} : { why: "only the allow-listed host is accepted; nothing else is fetched" }),
    oracle: async (client) => {
      const tag = `t${Math.random().toString(36).slice(2, 10)}`;
      const target = new URL(client.listener.url(tag));
      const parts: Record<string, string> = {
        scheme: target.protocol.replace(/:$/, ""),
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
      };
      const { scheme, ...rest } = parts;
      // A JSON body carries the port as the number its schema declares.
      const answer = await client.ask(
        input === "json"
          ? { as: "alice", method, path, json: { ...parts, port: Number(parts.port) } }
          : placed({ as: "alice", method, path }, input, "scheme", scheme!, rest),
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      return verdict(
        client.listener.hits(tag) > 0,
        `listener hits ${client.listener.hits(tag)}; ${brief(answer)}`,
      );
    },
  };
}

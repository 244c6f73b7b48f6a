import fs from "node:fs";
import type { Row } from "../../model/row.ts";
import { brief, marker, verdict } from "../../oracles/oracle.ts";
import { inputBody, inputParam, nodeUserRoute, pyRoute, readInput } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { err, guarded, json, obj, STR } from "../schemas.ts";

// Path traversal where the application writes (CWE-22, CWE-73): a caller's file name is joined to an
// uploads folder and written. Vulnerable rows join it as given, or strip `../` once (`....//` survives).
// Safe twins keep the base name, check the resolved path stays in the folder, or name the file themselves.
// Writes never leave the server's own folder, whatever the name: the corpus is dangerous enough.

export interface FileWriteKnobs {
  /** `multipart`: an uploaded file's own name (Flask's `request.files`; the Fastify servers parse no multipart). */
  input: "json" | "query" | "multipart";
  /** The input's name: what a caller sets to choose where the file goes (multipart: the file part's name). */
  field: "filename" | "path" | "name" | "document";
  /** Vulnerable rows. */
  check?: "none" | "strip-once";
  /** Safe rows. */
  guard?: "basename" | "resolved-check" | "generated";
}

export function buildFileWrite(row: Row<FileWriteKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const { input, field, check = "none", guard = "basename" } = row.knobs;
  const { place } = ctx;
  const path = `${place.base}/files`;
  const folder = `"var", "uploads", ${JSON.stringify(place.slug)}`;
  const name = {
    node: vulnerable
      ? check === "strip-once"
        ? 'name.replace("../", "")'
        : "name"
      : guard === "basename"
        ? "path.basename(name)"
        : guard === "generated"
          ? "`${crypto.randomUUID()}.txt`"
          : "name",
    python: vulnerable
      ? check === "strip-once"
        ? 'name.replace("../", "", 1)'
        : "name"
      : guard === "basename"
        ? "os.path.basename(name)"
        : guard === "generated"
          ? 'f"{uuid.uuid4()}.txt"'
          : "name",
  };
  const inside = !vulnerable && guard === "resolved-check";
  const multipart = input === "multipart";
  if (multipart && ctx.server.stack !== "python")
    throw new Error(`${row.id}: multipart uploads are served by the Flask servers only`);
  const node = `let name = ${readInput("node", input === "query" ? "query" : "json", field)};
const content = (request.body ?? {})["content"];
if (typeof content !== "string") return reply.code(400).send({ error: "content is required" });
if (name === "" || name.length > 200) return reply.code(400).send({ error: "${field} must be 1 to 200 characters" });
const folder = path.join(HERE, ${folder});
const target = path.resolve(folder, ${name.node});
// Never outside the server's own folder${inside ? ", nor outside the uploads folder" : " (the flaw stays within it)"}.
if (!target.startsWith(${inside ? "folder" : "HERE"} + path.sep)) return reply.code(400).send({ error: "bad ${field}" });
fs.mkdirSync(path.dirname(target), { recursive: true });
fs.writeFileSync(target, content);
return reply.code(201).send({ stored: path.basename(target) });`;
  const read = multipart
    ? `upload = request.files.get(${JSON.stringify(field)})
if upload is None or not upload.filename:
    return jsonify(error="a file is required"), 400
name = upload.filename
content = upload.read().decode("utf-8", "replace")`
    : `name = ${readInput("python", input === "query" ? "query" : "json", field)}
content = (request.get_json(silent=True) or {}).get("content")
if not isinstance(content, str):
    return jsonify(error="content is required"), 400`;
  const python = `user = require_user()
${read}
if name == "" or len(name) > 200:
    return jsonify(error="${field} must be 1 to 200 characters"), 400
folder = os.path.join(HERE, ${folder})
target = os.path.realpath(os.path.join(folder, ${name.python}))
# Never outside the server's own folder${inside ? ", nor outside the uploads folder" : " (the flaw stays within it)"}.
if not target.startswith(os.path.realpath(${inside ? "folder" : "HERE"}) + os.sep):
    return jsonify(error="bad ${field}"), 400
os.makedirs(os.path.dirname(target), exist_ok=True)
with open(target, "w") as handle:
    handle.write(content)
return jsonify(stored=os.path.basename(target)), 201`;
  const endpoint: Endpoint = {
    method: "POST",
    path,
    summary: `Store a ${place.singular} file`,
    access: "user",
    parameters: input === "query" ? inputParam("query", field, STR) : [],
    body: multipart
      ? {
          contentType: "multipart/form-data",
          schema: obj({ [field]: { type: "string", format: "binary" } }),
          required: true,
        }
      : input === "json"
        ? inputBody("json", { [field]: STR, content: STR }, [field, "content"])
        : { contentType: "application/json", schema: obj({ content: STR }), required: true },
    responses: {
      "201": json("stored", obj({ stored: STR })),
      "400": err("no content, or no name of 1 to 200 characters"),
      ...guarded("user"),
    },
    node: nodeUserRoute("POST", path, node),
    python: pyRoute("POST", path, python),
  };
  const uploads = (root: string) => `${root}/servers/${ctx.server.name}/var/uploads`;
  return {
    endpoint,
    title: vulnerable
      ? `${path} writes files outside its folder through ${multipart ? "the name of the uploaded file" : input === "json" ? "the body field" : "the query parameter"} ${field} (${check === "none" ? "no check" : "../ stripped once"})`
      : `${path} stores files under a name from the ${input}`,
    ...(vulnerable
      ? {}
      : {
          why:
            guard === "basename"
              ? "only the name's last part is used"
              : guard === "resolved-check"
                ? "the resolved path must stay in the uploads folder"
                : "the server names the file itself",
        }),
    oracle: async (client) => {
      // A new name aimed one folder above the uploads folder of this operation: written there, or not.
      const file = `${marker("crpw")}.txt`;
      const aimed = check === "strip-once" ? `....//${file}` : `../${file}`;
      const boundary = `crpboundary${marker()}`;
      const answer = await client.ask(
        multipart
          ? {
              as: "alice",
              method: "POST",
              path,
              contentType: `multipart/form-data; boundary=${boundary}`,
              body: `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${aimed}"\r\nContent-Type: text/plain\r\n\r\ncorpus\r\n--${boundary}--\r\n`,
            }
          : {
              as: "alice",
              method: "POST",
              path,
              ...(input === "query" ? { query: { [field]: aimed } } : {}),
              json: input === "json" ? { [field]: aimed, content: "corpus" } : { content: "corpus" },
            },
      );
      const landed = `${uploads(client.corpusRoot)}/${file}`;
      const escaped = fs.existsSync(landed);
      fs.rmSync(landed, { force: true });
      return verdict(
        escaped,
        `${aimed} → ${brief(answer)}; ${escaped ? "written above the folder" : "not written above"}`,
      );
    },
  };
}

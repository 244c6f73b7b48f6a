import fs from "node:fs";
import type { Row } from "../../model/row.ts";
import { brief, marker, verdict } from "../../oracles/oracle.ts";
import { pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { err, guarded, json, obj, STR } from "../schemas.ts";

// Stored XSS through an upload (CWE-434, CWE-79): an avatar upload keeps any file, and its download route
// serves the file with the type its extension implies, so an uploaded .html is a page of the site. Safe
// twins serve every file as a download, serve it as plain text, or accept images only. Flask servers only:
// the Fastify servers parse no multipart bodies.

export interface UploadServeKnobs {
  /** Safe rows: what keeps an uploaded page from rendering. */
  guard?: "attachment" | "text-plain" | "images-only";
}

export function buildUploadServe(row: Row<UploadServeKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const { guard } = row.knobs;
  if (vulnerable === (guard !== undefined))
    throw new Error(`${row.id}: a ${row.label} row ${vulnerable ? "takes no" : "needs a"} guard`);
  if (ctx.server.stack !== "python")
    throw new Error(`${row.id}: uploads are served by the Flask servers only`);
  const { place } = ctx;
  const path = `${place.base}/avatars`;
  const folder = `os.path.join(HERE, "var", "public", ${JSON.stringify(place.slug)})`;
  const accept =
    guard === "images-only"
      ? `if not name.lower().endswith((".png", ".jpg", ".jpeg")):
    return jsonify(error="a PNG or JPEG image is required"), 400
`
      : "";
  const headers =
    guard === "attachment"
      ? '{"Content-Type": kind, "Content-Disposition": "attachment; filename=" + name}'
      : guard === "text-plain"
        ? '{"Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff"}'
        : '{"Content-Type": kind}';
  const upload: Endpoint = {
    method: "POST",
    path,
    summary: `Upload a ${place.singular} avatar`,
    access: "user",
    body: {
      contentType: "multipart/form-data",
      schema: obj({ image: { type: "string", format: "binary" } }),
      required: true,
    },
    responses: {
      "201": json("stored", obj({ stored: STR })),
      "400": err("no image"),
      ...guarded("user"),
    },
    node: "",
    python: pyRoute(
      "POST",
      path,
      `require_user()
upload = request.files.get("image")
name = os.path.basename(upload.filename or "") if upload is not None else ""
if name == "" or len(name) > 200:
    return jsonify(error="an image file is required"), 400
${accept}os.makedirs(${folder}, exist_ok=True)
upload.save(os.path.join(${folder}, name))
return jsonify(stored=name), 201`,
    ),
  };
  const download: Endpoint = {
    method: "GET",
    path: `${path}/{name}`,
    summary: `One ${place.singular} avatar`,
    access: "public",
    parameters: [{ name: "name", in: "path", required: true, schema: STR }],
    responses: { "200": { description: "the file" }, "404": err("no such avatar") },
    node: "",
    python: pyRoute(
      "GET",
      `${path}/{name}`,
      `file = os.path.join(${folder}, os.path.basename(name))
if not os.path.isfile(file):
    return jsonify(error="not found"), 404
kind = mimetypes.guess_type(file)[0] or "application/octet-stream"
with open(file, "rb") as handle:
    data = handle.read()
return data, 200, ${headers}`,
    ),
  };
  return {
    endpoint: upload,
    support: [download],
    top: { python: "import mimetypes" },
    title: vulnerable
      ? `${path} keeps any file and ${path}/{name} serves an uploaded page inline`
      : `${path} keeps uploaded files and ${path}/{name} serves them`,
    ...(vulnerable
      ? {}
      : {
          why:
            guard === "attachment"
              ? "every file is served as a download"
              : guard === "text-plain"
                ? "every file is served as plain text, not sniffed"
                : "only images are accepted",
        }),
    oracle: async (client) => {
      const name = `${marker("crpu")}.html`;
      const tag = `crp-${marker()}`;
      const boundary = `crpboundary${marker()}`;
      const stored = await client.ask({
        as: "alice",
        method: "POST",
        path,
        contentType: `multipart/form-data; boundary=${boundary}`,
        body: `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="${name}"\r\nContent-Type: text/html\r\n\r\n<!doctype html><${tag}></${tag}>\r\n--${boundary}--\r\n`,
      });
      const served = await client.ask({ path: `${path}/${name}` });
      fs.rmSync(`${client.corpusRoot}/servers/${ctx.server.name}/var/public/${place.slug}/${name}`, {
        force: true,
      });
      const inline =
        served.status === 200 &&
        (served.headers.get("content-type") ?? "").includes("text/html") &&
        !/attachment/i.test(served.headers.get("content-disposition") ?? "") &&
        served.text.includes(`<${tag}>`);
      return verdict(inline, `upload → ${brief(stored)}; ${path}/${name} → ${brief(served)}`);
    },
  };
}

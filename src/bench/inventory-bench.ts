import fs from "node:fs";
import path from "node:path";
import { inventoryByProvenance } from "../map/inventory.ts";
import { scanSourceRoutesAsync } from "../probes/routes/find-source-routes.ts";
import { listSourceFiles } from "../probes/routes/source-tree.ts";
import { composeOperations } from "../tools/servers/map-draft.ts";

// The inventory part of the benchmark: how long reading a repository's routes into operations takes, on
// the target's own source and on a generated repository of a given size (Express routers mounted under
// prefixes and Flask blueprints, with handlers reading their inputs), so the time per line is comparable
// across machines and runs.

const SOURCE_EXTENSIONS = new Set([".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts", ".py"]);

export interface StaticInventoryMeasure {
  root: string;
  files: number;
  lines: number;
  operations: number;
  /** Operations under a mount or blueprint prefix (not at the server root). */
  prefixed: number;
  by_source: Record<string, number>;
  seconds: number;
}

export async function measureStaticInventory(
  root: string,
  exclude: string[] = [],
): Promise<StaticInventoryMeasure> {
  const started = performance.now();
  const scan = await scanSourceRoutesAsync(root, { exclude });
  const operations = composeOperations([], scan.routes);
  const seconds = (performance.now() - started) / 1000;
  const listed = listSourceFiles(root, SOURCE_EXTENSIONS, { exclude, skipBrowserAssets: true }).files;
  const lines = listed.reduce((total, file) => total + countLines(path.join(root, file)), 0);
  return {
    root,
    files: Object.values(scan.files).reduce((sum, count) => sum + count, 0),
    lines,
    operations: operations.length,
    prefixed: operations.filter((operation) => operation.path.split("/").filter(Boolean).length > 2).length,
    by_source: inventoryByProvenance(operations),
    seconds: Math.round(seconds * 1000) / 1000,
  };
}

/** Writes a repository of about `lines` lines of route code under `root`; answers how many operations it declares. */
export function writeSyntheticRepository(root: string, lines: number): number {
  fs.mkdirSync(path.join(root, "src", "routes"), { recursive: true });
  fs.mkdirSync(path.join(root, "service", "views"), { recursive: true });
  fs.writeFileSync(path.join(root, "package.json"), JSON.stringify({ dependencies: { express: "4" } }));
  const mounts: string[] = [];
  let written = 0;
  let routes = 0;
  for (let index = 0; written < lines; index += 1) {
    const javascript = index % 2 === 0;
    const { text, count } = javascript ? expressModule(index) : flaskModule(index);
    const file = javascript
      ? path.join(root, "src", "routes", `resource${index}.js`)
      : path.join(root, "service", "views", `resource${index}.py`);
    fs.writeFileSync(file, text);
    if (javascript)
      mounts.push(`app.use("/api/v${index % 3}/resource${index}", require("./routes/resource${index}"));`);
    written += text.split("\n").length;
    routes += count;
  }
  fs.writeFileSync(
    path.join(root, "src", "server.js"),
    `const express = require("express");\nconst app = express();\n${mounts.join("\n")}\napp.listen(3000);\n`,
  );
  return routes;
}

function expressModule(index: number): { text: string; count: number } {
  const handlers: string[] = [];
  const verbs = ["get", "post", "put", "patch", "delete"];
  for (let route = 0; route < 10; route += 1) {
    const verb = verbs[route % verbs.length];
    handlers.push(`router.${verb}("/items${route}/:id", async (req, res) => {
  const { limit, offset } = req.query;
  const name = req.body?.name;
  const record = await store.find(req.params.id, { limit: Number(limit ?? 10), offset: Number(offset ?? 0) });
  if (!record) return res.status(404).json({ error: "not found" });
  const updated = { ...record, name: name ?? record.name, touched: Date.now() };
  for (const key of Object.keys(updated)) {
    if (typeof updated[key] === "string") updated[key] = updated[key].trim();
  }
  return res.json(updated);
});`);
  }
  const text = `const express = require("express");
const store = require("../store");
const router = express.Router();
// Resource ${index}: list, read and change its items.
${handlers.join("\n\n")}

module.exports = router;
`;
  return { text, count: handlers.length };
}

function flaskModule(index: number): { text: string; count: number } {
  const handlers: string[] = [];
  for (let route = 0; route < 10; route += 1) {
    const methods = route % 2 === 0 ? `["GET"]` : `["POST", "PUT"]`;
    handlers.push(`@bp.route("/things${route}/<int:thing_id>", methods=${methods})
def thing_${route}(thing_id):
    page = request.args.get("page", 1, type=int)
    payload = request.get_json(silent=True) or {}
    title = payload.get("title")
    row = db.fetch_one("SELECT * FROM things WHERE id = ?", (thing_id,))
    if row is None:
        abort(404)
    result = dict(row)
    if title:
        result["title"] = title.strip()
    result["page"] = page
    return jsonify(result)`);
  }
  const text = `from flask import Blueprint, abort, jsonify, request

from .. import db

bp = Blueprint("resource${index}", __name__, url_prefix="/svc/resource${index}")


${handlers.join("\n\n\n")}
`;
  // Half the views answer GET, half POST and PUT: three operations per pair.
  return { text, count: handlers.length * 1.5 };
}

function countLines(file: string): number {
  try {
    return fs.readFileSync(file, "utf8").split("\n").length;
  } catch {
    return 0;
  }
}

import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { SystemMapSchema } from "../../src/map/system-map.ts";
import { TargetProfileSchema } from "../../src/targets/profile-schema.ts";
import { mapTools } from "../../src/tools/servers/map-server.ts";
import { callTool, fakeRunContext } from "../support/fake-run-context.ts";
import { writeTree } from "./write-tree.ts";

// A profile that names neither channels nor a database: MAPPER finds both in the source.

const app = `
import sqlite3
from flask import Flask, request
from flask_socketio import SocketIO, emit

app = Flask(__name__)
socketio = SocketIO(app)

def db():
    return sqlite3.connect("data/shop.db")

@app.route("/api/orders")
def orders():
    return {"orders": []}

@socketio.on("track", namespace="/orders")
def track(message):
    emit("status", {"ok": True})
`;

describe("MAPPER on a profile that names neither channels nor a database", () => {
  it("maps the socket.io channel and the SQLite database the source shows, saying where it found it", async () => {
    const root = writeTree({ "app.py": app, "data/.keep": "" });
    const database = new Database(path.join(root, "data/shop.db"));
    database.exec("CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER NOT NULL)");
    database.close();
    const profile = TargetProfileSchema.parse({
      name: "shop",
      source: { path: "." },
      environment: { mode: "none" },
    });
    const context = fakeRunContext({
      target: { profile, file: path.join(root, "shop.yaml"), root, goldenLedger: undefined },
    });
    const tool = (name: string) => mapTools.find((candidate) => candidate.name === name)!;
    expect((await callTool(tool("map_source_routes"), {}, context)).ok).toBe(true);
    const read = await callTool(tool("map_database"), {}, context);
    expect(read).toMatchObject({ ok: true, data: { kind: "sqlite", tables: 1, found_in: "app.py:10" } });
    expect((await callTool(tool("save_system_map"), {}, context)).ok).toBe(true);

    const map = SystemMapSchema.parse(context.systemMap());
    expect(map.database).toMatchObject({
      kind: "sqlite",
      tables: [{ name: "orders" }],
      found: { path: "data/shop.db", in: "app.py:10" },
    });
    const channel = map.channels.find((entry) => entry.protocol === "socket.io");
    expect(channel).toMatchObject({ path: "/socket.io", seen_in: ["source"] });
    expect(channel?.namespaces).toContain("/orders");
    expect(channel?.events).toContain("track");
  });
});

import { beforeAll, describe, expect, it } from "vitest";
import type { Route } from "../../src/map/system-map.ts";
import { scanSourceRoutes } from "../../src/probes/routes/find-source-routes.ts";
import { bodyProperties, bodyRequired, parametersOf, routeAt } from "../fixtures/route-apps/route-lookup.ts";
import { writeTree } from "./write-tree.ts";

// A Flask app validating by hand, as small apps do: isinstance checks and refusing membership tests.
const APP = `
from flask import Flask, request, jsonify, abort

app = Flask(__name__)
STATES = ("open", "closed")


@app.route("/orders", methods=["POST"])
def create_order():
    body = request.get_json(silent=True) or {}
    if not isinstance(body.get("sku"), str):
        return jsonify(error="sku"), 400
    if not isinstance(body.get("quantity"), int) or isinstance(body.get("quantity"), bool):
        return jsonify(error="quantity"), 400
    if body.get("priority") not in ("low", "normal", "high"):
        return jsonify(error="priority"), 400
    return jsonify(body), 201


@app.route("/orders/<id>", methods=["PUT"])
def update_order(id):
    body = request.get_json(silent=True) or {}
    state, price = body.get("state"), body.get("price")
    if not (state in STATES):
        abort(400)
    if not isinstance(price, (int, float)):
        abort(400)
    return jsonify(body)


@app.route("/notes", methods=["POST"])
def create_note():
    data = request.get_json(silent=True) or {}
    title = data.get("title")
    text = data.get("note", "")
    tone = data.get("tone") or "plain"
    # An absent note is "" and an absent tone "plain": both pass, so only the title is required.
    if not isinstance(title, str) or not isinstance(text, str):
        return jsonify(error="title and note must be text"), 400
    if tone not in ("plain", "loud"):
        return jsonify(error="tone"), 400
    return jsonify(data), 201


@app.route("/discounts", methods=["POST"])
def create_discount():
    body = request.get_json(silent=True) or {}
    if not isinstance(body.get("percent"), int) or not 0 <= body["percent"] <= 100:
        return jsonify(error="percent must be from 0 to 100"), 400
    seats = body.get("seats")
    if not isinstance(seats, int) or seats < 1:
        return jsonify(error="seats"), 400
    # Branches that do not refuse say nothing of a range.
    weight = body.get("weight")
    if isinstance(weight, int) and weight > 10:
        weight = 10
    return jsonify(body), 201


@app.route("/search", methods=["GET"])
def search():
    kind = request.args.get("kind", "all")
    # A branch, not a refusal: every kind is served, so no enum is learned from it.
    if kind not in ("all", "mine"):
        kind = "all"
    mode = request.args.get("mode")
    if mode in ("fast", "slow"):
        return jsonify(mode=mode)
    return jsonify(kind=kind)
`;

describe("a Flask app that validates by hand", () => {
  let routes: Route[];
  beforeAll(() => {
    routes = scanSourceRoutes(writeTree({ "app.py": APP })).routes;
  });

  it("types fields from isinstance checks, the most specific number type winning over bool", () => {
    const create = bodyProperties(routeAt(routes, "POST /orders"));
    expect(create.sku).toEqual({ type: "string" });
    expect(create.quantity).toEqual({ type: "integer" });
    expect(bodyProperties(routeAt(routes, "PUT /orders/{id}")).price).toEqual({ type: "number" });
  });

  it("learns an enum from a refused value outside a literal set or a module constant, through tuple unpacking", () => {
    expect(bodyProperties(routeAt(routes, "POST /orders")).priority).toEqual({
      type: "string",
      enum: ["low", "normal", "high"],
    });
    expect(bodyProperties(routeAt(routes, "PUT /orders/{id}")).state).toEqual({
      type: "string",
      enum: ["open", "closed"],
    });
  });

  it("requires the fields a refusal demands a type or a listed value of (an absent one has neither)", () => {
    expect(bodyRequired(routeAt(routes, "POST /orders"))).toEqual(["priority", "quantity", "sku"]);
    expect(bodyRequired(routeAt(routes, "PUT /orders/{id}"))).toEqual(["price", "state"]);
  });

  it("does not require a checked field the handler reads with a default of its own", () => {
    const notes = routeAt(routes, "POST /notes");
    expect(bodyRequired(notes)).toEqual(["title"]);
    expect(bodyProperties(notes).note).toEqual({ type: "string" });
    expect(bodyProperties(notes).tone).toEqual({ type: "string", enum: ["plain", "loud"] });
  });

  it("learns a number's bounds from a refused value outside a range", () => {
    const create = bodyProperties(routeAt(routes, "POST /discounts"));
    expect(create.percent).toEqual({ type: "integer", minimum: 0, maximum: 100 });
    expect(create.seats).toEqual({ type: "integer", minimum: 1 });
    expect(create.weight).toEqual({ type: "integer" });
  });

  it("learns no enum from a membership test that does not refuse the request", () => {
    expect(parametersOf(routeAt(routes, "GET /search"))).toEqual({
      "query:kind": { type: "string" },
      "query:mode": { type: "string" },
    });
  });
});

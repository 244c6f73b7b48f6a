import { describe, expect, it } from "vitest";
import { scanSourceRoutes } from "../../src/probes/routes/find-source-routes.ts";
import { parametersOf, routeAt } from "../fixtures/route-apps/route-lookup.ts";
import { writeTree } from "./write-tree.ts";

// Validators in their less common forms, each linked to a route the way apps do it.
describe("validators as JSON Schema", () => {
  const routes = scanSourceRoutes(
    writeTree({
      "package.json": JSON.stringify({ dependencies: { express: "4" } }),
      "app.js": String.raw`
const express = require("express");
const yup = require("yup");
const { z } = require("zod");
const { checkSchema } = require("express-validator");
const { celebrate, Joi, Segments } = require("celebrate");

const app = express();
app.use(express.urlencoded({ extended: false }));

const Profile = yup.object({
  handle: yup.string().required().matches(/^[a-z]+$/),
  age: yup.number().integer().min(18),
  role: yup.string().oneOf(["user", "admin"]),
});
app.post("/profiles", async (req, res) => {
  const profile = await Profile.validate(req.body);
  res.json(profile);
});

const Base = z.object({ id: z.string().uuid(), name: z.string(), secret: z.string() });
const Public = Base.extend({ bio: z.string().max(160).nullable() }).omit({ secret: true }).partial();
app.patch("/people", (req, res) => res.json(Public.parse(req.body)));

app.get(
  "/reports",
  checkSchema({
    from: { in: ["query"], isISO8601: true },
    limit: { in: ["query"], optional: true, isInt: { options: { min: 1, max: 100 } } },
  }),
  (req, res) => res.json([]),
);

app.put(
  "/tags/:id",
  celebrate({ [Segments.BODY]: Joi.object().keys({ label: Joi.string().max(30).required(), color: Joi.string().valid("red", "blue") }) }),
  (req, res) => res.json({}),
);
`,
    }),
  ).routes;

  it("yup: required, integer bounds, patterns and oneOf; the app's only parser gives the encoding", () => {
    const profiles = routeAt(routes, "POST /profiles");
    expect(profiles.request_body).toEqual({
      content_type: "application/x-www-form-urlencoded",
      schema: {
        type: "object",
        properties: {
          handle: { type: "string", pattern: "^[a-z]+$" },
          age: { type: "integer", minimum: 18 },
          role: { type: "string", enum: ["user", "admin"] },
        },
        required: ["handle"],
      },
    });
  });

  it("zod: extend, omit and partial of a named schema", () => {
    expect(routeAt(routes, "PATCH /people").request_body?.schema).toEqual({
      type: "object",
      properties: {
        id: { type: "string", format: "uuid" },
        name: { type: "string" },
        bio: { type: "string", maxLength: 160 },
      },
    });
  });

  it("express-validator checkSchema and celebrate segments", () => {
    expect(parametersOf(routeAt(routes, "GET /reports"))).toEqual({
      "query:from!": { type: "string" },
      "query:limit": { type: "integer", minimum: 1, maximum: 100 },
    });
    expect(routeAt(routes, "PUT /tags/{id}").request_body?.schema).toEqual({
      type: "object",
      properties: {
        label: { type: "string", maxLength: 30 },
        color: { type: "string", enum: ["red", "blue"] },
      },
      required: ["label"],
    });
  });
});

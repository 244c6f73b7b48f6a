import type { Row } from "../../model/row.ts";
import { afterClick, openedPage } from "../../oracles/browser.ts";
import { type OracleClient, verdict } from "../../oracles/oracle.ts";
import { nodeRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { err, json, obj, STR } from "../schemas.ts";
import { ownedCollection, recordShape } from "./records.ts";
import { assetEndpoint, assetPath, pageDocument, pageEndpoint, pagePath, pageVariant } from "./ui-page.ts";

// What a person can find and believe (Nielsen's heuristics 1, 2, 3 and 6; WCAG 2.4.5 Multiple Ways and
// 2.4.8 Location): a working page no navigation reaches, a page with no way on or back, help text that
// promises a limit the API does not keep, a success message for a request that failed. The look-alikes: a
// page reached from the footer or from a page the menu lists, a page whose only way out is a back link or
// a breadcrumb, copy that matches the API, an honest error message.

export interface DiscoverKnobs {
  reach: "none" | "footer" | "via-list";
}

export function buildUndiscoverable(row: Row<DiscoverKnobs>, ctx: BuildContext): Built {
  const { reach } = row.knobs;
  const noun = ctx.place.plural;
  const path = pagePath(ctx, "/report");
  const list = pagePath(ctx);
  const vulnerable = row.label === "vulnerable";
  const files: Endpoint[] = [];
  if (reach === "via-list") {
    files.push(
      pageEndpoint(
        list,
        `The ${noun} list`,
        pageDocument({
          title: `${cap(noun)}`,
          body: `<p>Twelve ${noun} this month.</p><p><a href="${path}">Monthly report</a></p>`,
        }),
      ),
    );
  }
  return pageVariant(row, {
    page: {
      path,
      label: `${cap(noun)} report`,
      listed: reach === "footer" ? "footer" : false,
      ...(reach === "via-list" ? { via: { path: list, label: cap(noun) } } : {}),
    },
    document: pageDocument({
      title: `${cap(noun)} report`,
      body: `<p>Twelve ${noun} opened and nine closed this month.</p>`,
    }),
    summary: `The monthly ${noun} report`,
    files,
    title: vulnerable
      ? `The monthly ${noun} report works but no page links to it`
      : `The monthly ${noun} report is not in the main menu`,
    why:
      reach === "footer"
        ? "the home page's footer links it"
        : "the list page the menu links has a link to it",
    oracle: async (client) => {
      const served = await client.ask({ path });
      const reached = await reachable(client, path);
      return verdict(
        served.status === 200 && !reached,
        `answers ${served.status}; ${reached ? "reached" : "not reached"} from /`,
      );
    },
  });
}

/** Whether following same-origin links from the home page, breadth first, reaches `target`. */
async function reachable(client: OracleClient, target: string): Promise<boolean> {
  const queue = ["/"];
  const seen = new Set(queue);
  while (queue.length > 0 && seen.size < 80) {
    const path = queue.shift()!;
    if (path === target) return true;
    const answer = await client.ask({ path, headers: { accept: "text/html" } });
    if (!answer.headers.get("content-type")?.includes("html")) continue;
    for (const [, href] of answer.text.matchAll(/<a [^>]*href="([^"]+)"/g)) {
      const url = new URL(href!, client.baseUrl);
      if (url.origin !== new URL(client.baseUrl).origin || seen.has(url.pathname)) continue;
      seen.add(url.pathname);
      queue.push(url.pathname);
    }
  }
  return seen.has(target);
}

export interface DeadEndKnobs {
  way: "none" | "back" | "breadcrumb";
}

export function buildDeadEnd(row: Row<DeadEndKnobs>, ctx: BuildContext): Built {
  const { way } = row.knobs;
  const noun = ctx.place.plural;
  const path = pagePath(ctx);
  const vulnerable = row.label === "vulnerable";
  return pageVariant(row, {
    page: { path, label: `${cap(noun)} receipt`, listed: "menu" },
    document: pageDocument({
      title: `${cap(noun)} receipt`,
      nav: way === "none" ? "none" : way,
      body: `<p>Thank you. Your ${ctx.place.singular} request number 4711 is recorded.</p><p>We answer within two working days.</p>`,
    }),
    summary: `The ${noun} receipt page`,
    title: vulnerable
      ? `The ${noun} receipt page has no link, menu or button: no way on or back`
      : `The ${noun} receipt page has no menu`,
    why: way === "back" ? "a back link leads to the overview" : "a breadcrumb leads home",
    oracle: async (client) => {
      const ways = await openedPage(client, path, (page) =>
        page.evaluate(() => {
          const here = window.location.pathname;
          const links = [...document.querySelectorAll("a[href]")].filter(
            (anchor) => new URL((anchor as HTMLAnchorElement).href).pathname !== here,
          );
          return links.length + document.querySelectorAll("form, nav, button, [role=button]").length;
        }),
      );
      return verdict(ways === 0, `${ways} way(s) on or back`);
    },
  });
}

export interface CopyKnobs {
  form: "length-limit" | "false-success";
  /** length-limit: the characters the help promises (the API keeps 80). */
  promised?: number;
  /** false-success: whether the page tells the truth when the request fails. */
  honest?: boolean;
}

export function buildMisleadingCopy(row: Row<CopyKnobs>, ctx: BuildContext): Built {
  return row.knobs.form === "length-limit" ? lengthCopy(row, ctx) : resultCopy(row, ctx);
}

function lengthCopy(row: Row<CopyKnobs>, ctx: BuildContext): Built {
  const promised = row.knobs.promised ?? 80;
  const noun = ctx.place.plural;
  const path = pagePath(ctx, "/help");
  const [create, list] = ownedCollection(ctx, recordShape("sequential"));
  const vulnerable = row.label === "vulnerable";
  return pageVariant(row, {
    page: {
      path,
      label: `Help with ${noun}`,
      listed: "menu",
      places: [{ endpoint: `POST ${create!.path}` }],
    },
    document: pageDocument({
      title: `Help with ${noun}`,
      body: `<h2>Naming</h2><p>A ${ctx.place.singular} title can be up to ${promised} characters long. Titles are shown in lists and on each ${ctx.place.singular}'s page.</p>`,
    }),
    summary: `Help with ${noun}`,
    files: [create!, list!],
    title: vulnerable
      ? `The help promises ${promised}-character titles; creating a ${ctx.place.singular} refuses more than 80`
      : `The help states a title length limit`,
    why: `the API accepts titles of ${promised} characters, as the help says`,
    oracle: async (client) => {
      const page = await client.ask({ path });
      const limit = Number(page.text.match(/up to (\d+) characters/)?.[1]);
      const short = await client.ask({
        as: "alice",
        method: "POST",
        path: create!.path,
        json: { title: "Short" },
      });
      const full = await client.ask({
        as: "alice",
        method: "POST",
        path: create!.path,
        json: { title: "t".repeat(limit) },
      });
      return verdict(
        short.status < 300 && full.status >= 400 && full.status < 500,
        `help promises ${limit}; short → ${short.status}, ${limit} characters → ${full.status}`,
      );
    },
  });
}

function resultCopy(row: Row<CopyKnobs>, ctx: BuildContext): Built {
  const noun = ctx.place.plural;
  const path = pagePath(ctx, "/name");
  const api = `${ctx.place.base}/names`;
  const script = assetPath(ctx, "js");
  const vulnerable = row.label === "vulnerable";
  // The vulnerable script reports success whatever the answer; the honest one reads it.
  const after = row.knobs.honest
    ? 'async (response) => {\n    const body = await response.json();\n    status.textContent = response.ok ? "Saved." : "Not saved: " + body.error;\n  }'
    : '() => {\n    status.textContent = "Saved.";\n  }';
  const code = `const status = document.getElementById("status");\ndocument.getElementById("naming").addEventListener("submit", (event) => {\n  event.preventDefault();\n  fetch(${JSON.stringify(api)}, {\n    method: "POST",\n    headers: { "content-type": "application/json" },\n    body: JSON.stringify({ name: document.getElementById("name").value }),\n  }).then(${after});\n});\n`;
  const reserve: Endpoint = {
    method: "POST",
    path: api,
    summary: `Reserve a ${ctx.place.singular} name`,
    access: "public",
    body: { contentType: "application/json", schema: obj({ name: STR }, ["name"]), required: true },
    responses: { "201": json("reserved", obj({ name: STR })), "409": err("the name is taken") },
    node: nodeRoute(
      "POST",
      api,
      'const name = String((request.body ?? {}).name ?? "");\nif (name === "" || name === "main") return reply.code(409).send({ error: "that name is already taken" });\nreturn reply.code(201).send({ name });',
    ),
    python: pyRoute(
      "POST",
      api,
      'name = str((request.get_json(silent=True) or {}).get("name", ""))\nif name in ("", "main"):\n    return jsonify(error="that name is already taken"), 409\nreturn jsonify(name=name), 201',
    ),
  };
  return pageVariant(row, {
    page: { path, label: `Name your ${noun}`, listed: "menu", places: [{ endpoint: `POST ${api}` }] },
    document: pageDocument({
      title: `Name your ${noun}`,
      body: `<form id="naming"><label for="name">Name</label> <input id="name" value="main"> <button type="submit">Save</button></form><p id="status" role="status"></p>`,
      scripts: [script],
    }),
    summary: `Name your ${noun}`,
    files: [reserve, assetEndpoint(script, "js", code)],
    title: vulnerable
      ? 'The page says "Saved." while the request was refused (409)'
      : `The ${noun} naming page reports what the server answered`,
    why: "a refused name is reported with the server's reason",
    oracle: async (client) => {
      const seen = await afterClick(client, path, "Save");
      const refused = seen.statuses.some((code) => code >= 400);
      return verdict(
        refused && seen.text.includes("Saved."),
        `statuses ${seen.statuses.join(",")}; shows: ${seen.text.replace(/\s+/g, " ").slice(-80)}`,
      );
    },
  });
}

function cap(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

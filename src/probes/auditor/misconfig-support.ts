import type { Operation } from "../../map/system-map.ts";
import { operationKey } from "../api/operation-index.ts";
import { sendPaced } from "../api/probe-support.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { joinUrl, pathParameterNames, toTemplateForm } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send } from "../session/probe-run.ts";

// What the misconfiguration checks share: a plain GET, the places they report, and the control every
// "is this file really there" judgement needs: what the application answers for a path that cannot exist
// (many answer 200 with their index page for anything).

export function get(
  run: ProbeRun,
  user: string | undefined,
  path: string,
  headers: Record<string, string> = {},
): Promise<HttpExchange | undefined> {
  return send(run, user, {
    method: "GET",
    url: joinUrl(run.target.baseUrl, path),
    headers: { accept: "text/html, application/json;q=0.9, */*;q=0.8", ...headers },
  });
}

/** `get` of a mapped path, paced like any probe request when it is an operation (a slow one is left alone). */
export function getMapped(
  run: ProbeRun,
  user: string | undefined,
  target: MappedPath,
  headers: Record<string, string> = {},
): Promise<HttpExchange | undefined> {
  const sendIt = () => get(run, user, target.path, headers);
  return target.operation ? sendPaced(run, target.operation, sendIt) : sendIt();
}

/** A path the map lists as a GET without parameters, with the operation when there is one. */
export interface MappedPath {
  path: string;
  operation?: Operation;
}

/** Every GET without path parameters the map knows: operations first, then routes and pages not among them. */
export function mappedGetPaths(run: ProbeRun): MappedPath[] {
  const seen = new Map<string, MappedPath>();
  for (const operation of run.map.operations)
    if (operation.method.toUpperCase() === "GET" && pathParameterNames(operation.path).length === 0) {
      const path = toTemplateForm(operation.path);
      if (!seen.has(path)) seen.set(path, { path, operation });
    }
  for (const route of run.map.routes)
    if (route.method.toUpperCase() === "GET" && pathParameterNames(route.path).length === 0) {
      const path = toTemplateForm(route.path);
      if (!seen.has(path)) seen.set(path, { path });
    }
  for (const page of run.map.pages) {
    const path = page.path.split(/[?#]/)[0]!;
    if (path && !path.includes("{") && !seen.has(path)) seen.set(path, { path });
  }
  return [...seen.values()];
}

export function locationOf(target: MappedPath): { kind: "endpoint"; value: string } {
  return {
    kind: "endpoint",
    value: target.operation ? operationKey(target.operation) : `GET ${target.path}`,
  };
}

/** What the application answers for a path that cannot exist, under `folder` (cached per folder). */
export class MissingControl {
  private readonly answers = new Map<string, Promise<HttpExchange | undefined>>();

  constructor(private readonly run: ProbeRun) {}

  for(folder: string, suffix = ".txt"): Promise<HttpExchange | undefined> {
    const base = folder.endsWith("/") ? folder : `${folder}/`;
    const key = `${base}|${suffix}`;
    let answer = this.answers.get(key);
    if (!answer) {
      answer = get(this.run, undefined, `${base}qaas-missing-${uniqueSeed()}${suffix}`);
      this.answers.set(key, answer);
    }
    return answer;
  }
}

/** Whether an answer is the application's answer for anything (its not-found page or its index page). */
export function looksLikeControl(exchange: HttpExchange, control: HttpExchange | undefined): boolean {
  const response = exchange.response;
  const other = control?.response;
  if (!response || !other) return false;
  if (other.status !== response.status) return false;
  const strip = (body: string) =>
    body
      .replace(/qaas-missing-[\w-]+(?:\.\w+)?/g, "")
      .replace(/\s+/g, " ")
      .trim();
  const left = strip(response.body);
  const right = strip(other.body);
  if (left === right) return true;
  // A page that echoes the requested path differs by little more than that path.
  return Math.abs(left.length - right.length) <= 64 && similarity(left, right) > 0.9;
}

function similarity(left: string, right: string): number {
  const grams = (text: string) => {
    const set = new Set<string>();
    for (let index = 0; index + 4 <= text.length; index += 4) set.add(text.slice(index, index + 8));
    return set;
  };
  const a = grams(left);
  const b = grams(right);
  if (a.size === 0 || b.size === 0) return left === right ? 1 : 0;
  let shared = 0;
  for (const gram of a) if (b.has(gram)) shared += 1;
  return (2 * shared) / (a.size + b.size);
}

export function isHtmlAnswer(exchange: HttpExchange | undefined): boolean {
  const response = exchange?.response;
  if (!response) return false;
  return /html/i.test(response.contentType) || /^\s*(<!doctype html|<html)/i.test(response.body);
}

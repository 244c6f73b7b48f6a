import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import { operationKey, selectOperations } from "../api/operation-index.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { ResourceFactory } from "../api/resource-factory.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { untilBudget, usableUsers } from "../session/probe-run.ts";
import { answerShows, answerShowsAll } from "./answer-text.ts";
import { operationFinding } from "./injection-finding.ts";
import type { KnownFile } from "./known-files.ts";
import { plainTextFiles } from "./known-files.ts";
import type { LoopbackListener } from "./loopback-listener.ts";
import { isLoopbackTarget, runListener } from "./loopback-listener.ts";
import { uniqueToken } from "./markers.ts";

// A target may fetch in the background after answering, and a loaded machine delays it further.
const LISTENER_WAIT_MS = 4000;

import type { OpenOperation } from "./operation-sender.ts";
import { openOperation, sendRequest, withRawBody } from "./operation-sender.ts";
import type { Sent } from "./point-sender.ts";
import type { PointProbeOptions } from "./probe-frame.ts";
import { mayProbe, pointWords } from "./probe-points.ts";

// XML external entities. Operations that take XML (an XML content type, an XML-, SOAP- or import-looking
// operation, an upload) get a document whose external entity either names a plain file the application
// ships (reported when its lines come back in the answer) or calls qaas's loopback listener with a unique
// token (reported when the listener records the call: a general entity used in the content, and a
// parameter entity for parsers that only load the DTD). A safe parser ignores or refuses the entity; each
// finding is confirmed by a second document (the same file again, or a second token) and a file finding by
// a missing-file control.

const XML_WORDS = /\bxml\b|soap|wsdl|\bimport|\bfeed\b|\brss\b|\batom\b|\bsvg\b|\bparse|\bupload|\bsitemap/;
const ELEMENTS = ["name", "title", "value", "text", "data", "description", "content", "id"];

function acceptsXml(operation: Operation): boolean {
  const method = operation.method.toUpperCase();
  if (method !== "POST" && method !== "PUT") return false;
  const type = operation.request_body?.content_type.toLowerCase() ?? "";
  if (type.includes("xml")) return true;
  if (type && !type.includes("json") && !type.includes("form")) return false;
  const words = pointWords({ operation, in: "body", name: "", numeric: false }).operation;
  return (
    XML_WORDS.test(words) || (!type && !operation.documented && XML_WORDS.test(operation.path.toLowerCase()))
  );
}

/** A document whose every likely element carries `body` (an entity reference), under an optional DTD. */
function xmlDocument(dtd: string, body: string): string {
  const children = ELEMENTS.map((name) => `<${name}>${body}</${name}>`).join("");
  return `<?xml version="1.0" encoding="UTF-8"?>\n${dtd}<qaas>${children}</qaas>`;
}

const entityDtd = (system: string) => `<!DOCTYPE qaas [<!ENTITY qaas SYSTEM "${system}">]>\n`;
const parameterDtd = (system: string) => `<!DOCTYPE qaas [<!ENTITY % qaas SYSTEM "${system}"> %qaas;]>\n`;

interface Hit {
  open: OpenOperation;
  technique: "file" | "loopback-entity" | "loopback-parameter-entity";
  file?: KnownFile;
  evidence: Array<{ label: string; sent: Sent }>;
  detail: string;
}

export async function probeXxe(
  run: ProbeRun,
  options: PointProbeOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const operations = selectOperations(run.map, options.operation).filter(
    (operation) => acceptsXml(operation) && mayProbe(run.target, operation),
  );
  const files = plainTextFiles(run);
  const listener = isLoopbackTarget(run.target.baseUrl) ? await runListener(run.context) : undefined;
  const stats = {
    operations: operations.length,
    files: files.map((file) => file.relative),
    listener: listener
      ? `127.0.0.1:${listener.port}`
      : "not used: the target is not on this machine's loopback",
    tested: 0,
    unreachable: 0,
  };
  const hits: Hit[] = [];
  const factory = new ResourceFactory(run);
  const exhausted = await untilBudget(run, async () => {
    const users = (await usableUsers(run)).filter((user) => !options.user || user.name === options.user);
    await mapConcurrent(operations, 3, async (operation) => {
      const open = await openOperation(run, factory, operation, users, (prepared) =>
        withRawBody(prepared, xmlDocument("", "qaas"), xmlType(prepared)),
      );
      if (!open) {
        stats.unreachable += 1;
        return;
      }
      stats.tested += 1;
      const hit =
        (await fileEntity(run, open, files)) ??
        (listener ? await loopbackEntity(run, open, listener) : undefined);
      if (hit) hits.push(hit);
    });
  });
  const candidates = hits.map((hit) => findingOf(run, hit));
  return { candidates, stats: { ...stats, confirmed: candidates.length, budget_exhausted: exhausted } };
}

function xmlType(prepared: PreparedRequest): string {
  const type = prepared.operation.request_body?.content_type ?? "";
  return type.toLowerCase().includes("xml") ? type : "application/xml";
}

function document(open: OpenOperation, dtd: string): PreparedRequest {
  return withRawBody(open.prepared, xmlDocument(dtd, "&qaas;"), xmlType(open.prepared));
}

async function fileEntity(
  run: ProbeRun,
  open: OpenOperation,
  files: readonly KnownFile[],
): Promise<Hit | undefined> {
  for (const file of files) {
    if (!file.absolute || answerShowsAll(open.exchange, file.excerpts)) continue;
    const system = `file://${file.absolute}`;
    const sent = await sendRequest(run, open, document(open, entityDtd(system)));
    if (!sent || !answerShowsAll(sent.exchange, file.excerpts)) continue;
    const again = await sendRequest(run, open, document(open, entityDtd(system)));
    if (!again || !answerShowsAll(again.exchange, file.excerpts)) continue;
    const missing = await sendRequest(
      run,
      open,
      document(open, entityDtd(`file://${file.absolute.replace(/[^/]+$/, `${uniqueToken()}-missing.txt`)}`)),
    );
    if (!missing || answerShowsAll(missing.exchange, file.excerpts)) continue;
    return {
      open,
      technique: "file",
      file,
      evidence: [
        { label: "file-entity", sent },
        { label: "file-entity-again", sent: again },
        { label: "missing-file-entity", sent: missing },
      ],
      detail: `an external entity naming ${file.relative} (a file the application ships) was replaced by the file's content in the answer, twice; an entity naming a missing file was not`,
    };
  }
  return undefined;
}

async function loopbackEntity(
  run: ProbeRun,
  open: OpenOperation,
  listener: LoopbackListener,
): Promise<Hit | undefined> {
  for (const [technique, dtd] of [
    ["loopback-entity", entityDtd],
    ["loopback-parameter-entity", parameterDtd],
  ] as const) {
    const first = uniqueToken();
    const sent = await sendRequest(run, open, document(open, dtd(listener.url(first, "xxe"))));
    if (!sent || !(await listener.waitFor(first, LISTENER_WAIT_MS))) continue;
    const second = uniqueToken();
    const again = await sendRequest(run, open, document(open, dtd(listener.url(second, "xxe"))));
    if (!again || !(await listener.waitFor(second, LISTENER_WAIT_MS))) continue;
    const shown = answerShows(sent.exchange, first) ? " and showed what it fetched in the answer" : "";
    return {
      open,
      technique,
      evidence: [
        { label: "listener-entity", sent },
        { label: "listener-entity-again", sent: again },
      ],
      detail: `an external ${technique === "loopback-entity" ? "general" : "parameter"} entity pointing at qaas's loopback listener made the server call it (tokens ${first} and ${second}, both recorded)${shown}`,
    };
  }
  return undefined;
}

function findingOf(run: ProbeRun, hit: Hit): EnvelopeDraft {
  const key = operationKey(hit.open.operation);
  return operationFinding(run, {
    operation: hit.open.operation,
    user: hit.open.user,
    baseline: hit.open.exchange,
    discriminator: `xxe:${hit.technique}`,
    defectClass: "xxe",
    title: `XML external entity resolved by ${key} (${hit.technique === "file" ? "file read" : "server-side request"})`,
    summary: `${key}: ${hit.detail}. The XML parser resolves external entities from the client's document.`,
    impact:
      "An attacker reads the server's files and makes it send requests to internal services; entity expansion can also exhaust it.",
    evidence: hit.evidence,
    replayable: hit.technique === "file",
    assertions: hit.file
      ? [
          {
            kind: "answer_lacks",
            step: "file-entity",
            text: hit.file.excerpts[0],
            message: "the XML parser must not resolve external entities (a local file was read)",
          },
        ]
      : undefined,
    notes: hit.file ? [`file read: ${hit.file.relative}`] : [`listener hits recorded for both tokens`],
  });
}

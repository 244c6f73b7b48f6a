import { z } from "zod";
import { surfaceBudget } from "../../probes/http/run-http.ts";
import { probeCommandInjection } from "../../probes/injection/command-injection.ts";
import { probeInsecureDeserialization } from "../../probes/injection/insecure-deserialization.ts";
import { probeLogInjection } from "../../probes/injection/log-injection.ts";
import { probeNoSqlInjection } from "../../probes/injection/nosql-injection.ts";
import { probeOpenRedirect } from "../../probes/injection/open-redirect.ts";
import { probePathTraversal } from "../../probes/injection/path-traversal.ts";
import { probeSsrf } from "../../probes/injection/ssrf.ts";
import { probeTemplateInjection } from "../../probes/injection/template-injection.ts";
import { probeWriteTraversal } from "../../probes/injection/write-traversal.ts";
import { probeXxe } from "../../probes/injection/xxe.ts";
import { probeActions, runProbeTool } from "../../probes/session/probe-run.ts";
import type { ToolDefinition } from "../tool.ts";
import { defineTool } from "../tool.ts";
import { ProbeFilter } from "./contract-server.ts";

// Injection beyond SQL, one tool per technique on the `security` server. Each oracle is harmless and
// computed by the target (shell or template arithmetic, a file the application ships, a hit on qaas's own
// loopback listener), and every finding is confirmed by a second, independent request.

const ProbeInput = z.strictObject(ProbeFilter);

export const probeCommandInjectionTool = defineTool({
  name: "probe_command_injection",
  server: "security",
  description:
    "OS command injection on every string input: separators and substitutions (`$()`, backticks, `;`, `|`, `&&`, newline; a single quote closed first; a cmd.exe `& echo` form) carrying `echo qaas$((a+b))`, reported only when the answer shows the sum a shell computed; for blind sinks a bounded `sleep 1` vs `sleep 0` differential, twice. Never runs anything but echo and sleep.",
  input: ProbeInput,
  actions: (_input, context) => probeActions(context),
  run: (input, context) =>
    runProbeTool(
      context,
      "probe_command_injection",
      { max_requests: input.max_requests ?? surfaceBudget(context, 900), timeout_ms: 15_000 },
      (run) => probeCommandInjection(run, input),
    ),
});

export const probeTemplateInjectionTool = defineTool({
  name: "probe_template_injection",
  server: "security",
  description:
    "Server-side template injection on every string input: a multiplication in each template syntax (`{{ }}`, `${ }`, `<%= %>`, `#{ }`, `{{= }}`, `{ }`, `@( )`, `*{ }`), reported when the product appears and the expression does not, confirmed by a second, different product.",
  input: ProbeInput,
  actions: (_input, context) => probeActions(context),
  run: (input, context) =>
    runProbeTool(
      context,
      "probe_template_injection",
      { max_requests: input.max_requests ?? surfaceBudget(context, 600) },
      (run) => probeTemplateInjection(run, input),
    ),
});

export const probeLogInjectionTool = defineTool({
  name: "probe_log_injection",
  server: "security",
  description:
    "Log injection on every string input: a value whose second line starts with a token of its own, then the log files the application writes in its source folder are read back; reported when a log line begins with the token (the CR/LF was written as a break), confirmed with new tokens. One request per input; needs the profile's source path.",
  input: ProbeInput,
  actions: (_input, context) => probeActions(context),
  run: (input, context) =>
    runProbeTool(
      context,
      "probe_log_injection",
      { max_requests: input.max_requests ?? surfaceBudget(context, 300) },
      (run) => probeLogInjection(run, input),
    ),
});

export const probePathTraversalTool = defineTool({
  name: "probe_path_traversal",
  server: "security",
  description:
    "Path traversal on file-naming inputs, reading only files the application ships (its sources when the profile gives the source path, the scripts and styles its pages load): `../`, `....//`, `..%2f`, double-encoded, `..\\`, the absolute path and a climb to / then the absolute path; reported when the answer carries the file's own lines, confirmed by a repeat, a missing-file control and the plain name (which must not show them). Where the target runs from its source tree on this machine, file names an operation writes too: a new plain name shows where names land, and `../` (or `....//`) with another new name must land one folder above; the file parts of multipart uploads too (every file written is removed afterwards).",
  input: ProbeInput,
  actions: (_input, context) => probeActions(context),
  run: (input, context) =>
    runProbeTool(
      context,
      "probe_path_traversal",
      { max_requests: input.max_requests ?? surfaceBudget(context, 1200) },
      async (run) => {
        const read = await probePathTraversal(run, input);
        const write = await probeWriteTraversal(run, input);
        return {
          candidates: [...read.candidates, ...write.candidates],
          stats: { ...read.stats, write: write.stats },
        };
      },
    ),
});

export const probeXxeTool = defineTool({
  name: "probe_xxe",
  server: "security",
  description:
    "XML external entities on operations that take XML (XML content types, XML/SOAP/import/upload-looking operations): an entity naming a plain file the application ships (reported when its lines come back; a missing-file control must not) or calling qaas's own loopback listener with a unique token (general and parameter entities; reported when the listener records the call), each confirmed by a second document. The listener is used only when the target runs on this machine's loopback.",
  input: ProbeInput,
  actions: (_input, context) => probeActions(context),
  run: (input, context) =>
    runProbeTool(
      context,
      "probe_xxe",
      { max_requests: input.max_requests ?? surfaceBudget(context, 300) },
      (run) => probeXxe(run, input),
    ),
});

export const probeSsrfTool = defineTool({
  name: "probe_ssrf",
  server: "security",
  description:
    "Server-side request forgery on URL-shaped inputs (url, uri, link, callback, webhook, image, avatar, feed… by name, `uri` format or value; host/port/path triples): each set to qaas's own loopback listener with a unique token, reported when the listener records the target's request, confirmed by a second token. Runs only when the target is on this machine's loopback; never names any other host.",
  input: ProbeInput,
  actions: (_input, context) => probeActions(context),
  run: (input, context) =>
    runProbeTool(
      context,
      "probe_ssrf",
      { max_requests: input.max_requests ?? surfaceBudget(context, 400) },
      (run) => probeSsrf(run, input),
    ),
});

export const probeNoSqlInjectionTool = defineTool({
  name: "probe_nosql_injection",
  server: "security",
  description:
    'NoSQL operator injection on JSON bodies, forms and query strings: each string field (and all of an operation\'s fields together) sent as an operator matching everything (`{"$ne": null}`, `{"$gt": ""}`, `field[$ne]=x`) and as one matching nothing (`{"$in": []}`); reported when the first answer is wider (admitted where refused, or more records) than both the baseline and the match-nothing answer, twice.',
  input: ProbeInput,
  actions: (_input, context) => probeActions(context),
  run: (input, context) =>
    runProbeTool(
      context,
      "probe_nosql_injection",
      { max_requests: input.max_requests ?? surfaceBudget(context, 600) },
      (run) => probeNoSqlInjection(run, input),
    ),
});

export const probeOpenRedirectTool = defineTool({
  name: "probe_open_redirect",
  server: "security",
  description:
    "Open redirect on redirect-naming inputs (next, return_to, redirect_uri, continue…) and on any input whose answer is already a redirect: a random host under the reserved .example TLD as an absolute URL, //host, /\\host, https:host and own-origin@host; reported when the Location header, resolved as a browser does, names that host, confirmed by a second host. Redirects are never followed.",
  input: ProbeInput,
  actions: (_input, context) => probeActions(context),
  run: (input, context) =>
    runProbeTool(
      context,
      "probe_open_redirect",
      { max_requests: input.max_requests ?? surfaceBudget(context, 600) },
      (run) => probeOpenRedirect(run, input),
    ),
});

export const probeInsecureDeserializationTool = defineTool({
  name: "probe_insecure_deserialization",
  server: "security",
  description:
    "Insecure deserialisation on fields that carry saved state (state, draft, session, snapshot… or restore/import/load operations): a pickle calling operator.mul, a YAML python/object/apply tag, a node-serialize function returning a product, raw and base64; reported when the product of two random operands shows in the answer, confirmed by a second pair. Nothing but arithmetic is ever called.",
  input: ProbeInput,
  actions: (_input, context) => probeActions(context),
  run: (input, context) =>
    runProbeTool(
      context,
      "probe_insecure_deserialization",
      { max_requests: input.max_requests ?? surfaceBudget(context, 400) },
      (run) => probeInsecureDeserialization(run, input),
    ),
});

export const injectionTools: ToolDefinition[] = [
  probeCommandInjectionTool,
  probeTemplateInjectionTool,
  probePathTraversalTool,
  probeXxeTool,
  probeSsrfTool,
  probeNoSqlInjectionTool,
  probeOpenRedirectTool,
  probeInsecureDeserializationTool,
  probeLogInjectionTool,
];

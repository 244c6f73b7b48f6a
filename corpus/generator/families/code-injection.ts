import type { Row } from "../../model/row.ts";
import { brief, verdict } from "../../oracles/oracle.ts";
import { methodFor, placed } from "../../oracles/placing.ts";
import {
  type InputLocation,
  inputBody,
  inputParam,
  nodeRoute,
  nodeUserRoute,
  pyRoute,
  readInput,
} from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { err, guarded, INT, json, obj, STR } from "../schemas.ts";

// Input that becomes code: a shell command line (CWE-78), a server-side template (CWE-1336), a document
// filter's operators (CWE-943), a deserialiser that builds objects by calling functions (CWE-502). Each
// oracle is inert arithmetic: the flaw shows as a number the payload only names.

export interface CommandInjectionKnobs {
  input: "query" | "json" | "form";
  quoting: "none" | "single" | "double";
  /** Safe rows: an argument vector (no shell), or an allow-list checked before the shell. */
  guard?: "argv" | "allow-list";
}

export interface TemplateInjectionKnobs {
  input: "query" | "json";
}

export type NoSqlKnobs = Record<string, never>;

export interface DeserializationKnobs {
  format: "pickle" | "yaml" | "node-serialize";
}

const SHELL_PAYLOADS = [
  "x; echo $((4111*3))",
  "x'; echo $((4111*3)); echo '",
  'x"; echo $((4111*3)); echo "',
  "$(echo $((4111*3)))",
];

export function buildCommandInjection(row: Row<CommandInjectionKnobs>, ctx: BuildContext): Built {
  const { input, quoting, guard = "argv" } = row.knobs;
  const vulnerable = row.label === "vulnerable";
  const method = methodFor(input);
  const path = `${ctx.place.base}/label`;
  const read = { node: readInput("node", input, "name"), python: readInput("python", input, "name") };
  const line = {
    none: (v: string) => `"echo Label: " + ${v}`,
    single: (v: string) => `"echo 'Label: " + ${v} + "'"`,
    double: (v: string) => `"echo \\"Label: " + ${v} + "\\""`,
  }[quoting];
  const allow = { node: "/^[A-Za-z0-9 ._-]{1,40}$/", python: 'r"[A-Za-z0-9 ._-]{1,40}"' };
  let node: string;
  let python: string;
  if (vulnerable || guard === "allow-list") {
    const checkNode = vulnerable
      ? ""
      : `if (!${allow.node}.test(name)) return reply.code(400).send({ error: "name may hold letters, digits, spaces, dots, dashes" });\n`;
    const checkPy = vulnerable
      ? ""
      : `if not re.fullmatch(${allow.python}, name):\n    return jsonify(error="name may hold letters, digits, spaces, dots, dashes"), 400\n`;
    node = `${checkNode}const result = await shell(${line("name")});\nreturn { output: result.stdout.trim() };`;
    python = `${checkPy}code, out, _ = shell(${line("name")})\nreturn jsonify(output=out.strip())`;
  } else {
    node =
      'const result = await run("/bin/echo", ["Label:", name]);\nreturn { output: result.stdout.trim() };';
    python = 'code, out, _ = run(["/bin/echo", "Label:", name])\nreturn jsonify(output=out.strip())';
  }
  const endpoint: Endpoint = {
    method,
    path,
    summary: `Preview a ${ctx.place.singular} label`,
    access: "user",
    parameters: inputParam(input, "name", STR, false),
    ...(inputBody(input, { name: STR }, []) ? { body: inputBody(input, { name: STR }, []) } : {}),
    responses: {
      "200": json("the label as printed", obj({ output: STR })),
      ...(!vulnerable && guard === "allow-list" ? { "400": err("characters outside the allowed set") } : {}),
      ...guarded("user"),
    },
    node: nodeUserRoute(method, path, `const name = ${read.node};\n${node}`),
    python: pyRoute(method, path, `require_user()\nname = ${read.python}\n${python}`),
  };
  return {
    endpoint,
    title: vulnerable
      ? `OS command injection through the ${input} field name (${quoting === "none" ? "unquoted" : `${quoting}-quoted`} shell argument)`
      : `Label preview runs a program with the ${input} field name`,
    ...(vulnerable
      ? {}
      : {
          why:
            guard === "argv"
              ? "the program gets an argument vector; no shell parses the input"
              : "only letters, digits, spaces, dots and dashes reach the shell",
        }),
    oracle: async (client) => {
      for (const payload of SHELL_PAYLOADS) {
        const answer = await client.ask(placed({ as: "alice", method, path }, input, "name", payload));
        if (answer.text.includes("12333")) return verdict(true, `${payload} → ${brief(answer)}`);
      }
      return verdict(false, "no payload's arithmetic ran");
    },
  };
}

export function buildTemplateInjection(row: Row<TemplateInjectionKnobs>, ctx: BuildContext): Built {
  const { input } = row.knobs;
  const vulnerable = row.label === "vulnerable";
  const method = methodFor(input as InputLocation);
  const path = `${ctx.place.base}/greeting`;
  const read = { node: readInput("node", input, "name"), python: readInput("python", input, "name") };
  const node = vulnerable
    ? 'greeting = renderTemplate("Hello " + name + ", welcome back!", { site: "Workspace" });'
    : 'greeting = renderSafeTemplate("Hello {{ name }}, welcome back!", { name, site: "Workspace" });';
  const python = vulnerable
    ? 'greeting = render_template_string("Hello " + name + ", welcome back!", site="Workspace")'
    : 'greeting = render_template_string("Hello {{ name }}, welcome back!", name=name, site="Workspace")';
  const endpoint: Endpoint = {
    method,
    path,
    summary: "Preview the welcome message",
    access: "user",
    parameters: inputParam(input, "name", STR, false),
    ...(inputBody(input, { name: STR }, []) ? { body: inputBody(input, { name: STR }, []) } : {}),
    responses: {
      "200": json("the message", obj({ greeting: STR })),
      "400": err("the message cannot be rendered"),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      method,
      path,
      `const name = ${read.node};
let greeting;
try {
  ${node}
} catch {
  return reply.code(400).send({ error: "the message cannot be rendered" });
}
return { greeting };`,
    ),
    python: pyRoute(
      method,
      path,
      `require_user()
name = ${read.python}
try:
    ${python}
except Exception:
    return jsonify(error="the message cannot be rendered"), 400
return jsonify(greeting=greeting)`,
    ),
  };
  return {
    endpoint,
    title: vulnerable
      ? `Server-side template injection through the ${input} field name`
      : `The welcome message is rendered from a template with the ${input} field name`,
    ...(vulnerable ? {} : { why: "the name is a template variable, never template source" }),
    oracle: async (client) => {
      const answer = await client.ask(
        placed({ as: "alice", method, path }, input as InputLocation, "name", "{{7*191}}"),
      );
      return verdict(answer.text.includes("1337"), brief(answer));
    },
  };
}

export function buildNoSqlInjection(row: Row<NoSqlKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const path = `${ctx.place.base}/unlock`;
  const vault = `VAULT_${ctx.place.slug.toUpperCase()}`;
  const documents = JSON.stringify([
    { email: "alice@corpus.test", pin: "4821", balance: 120 },
    { email: "bruno@corpus.test", pin: "7305", balance: 75 },
  ]);
  const checkNode = vulnerable
    ? ""
    : 'if (typeof body.email !== "string" || typeof body.pin !== "string") return reply.code(400).send({ error: "email and pin must be strings" });\n';
  const checkPy = vulnerable
    ? ""
    : 'if not isinstance(body.get("email"), str) or not isinstance(body.get("pin"), str):\n    return jsonify(error="email and pin must be strings"), 400\n';
  const endpoint: Endpoint = {
    method: "POST",
    path,
    summary: "Open a locker with its pin",
    looseBody: vulnerable,
    access: "public",
    body: { contentType: "application/json", schema: obj({ email: STR, pin: STR }), required: true },
    responses: {
      "200": json("the locker", obj({ email: STR, balance: INT })),
      "400": err("email and pin must be strings"),
      "401": err("wrong pin"),
    },
    node: nodeRoute(
      "POST",
      path,
      `const body = request.body ?? {};
${checkNode}const found = ${vault}.find((document) => matchesFilter(document, { email: body.email, pin: body.pin }));
if (!found) return reply.code(401).send({ error: "wrong pin" });
return { email: found.email, balance: found.balance };`,
    ),
    python: pyRoute(
      "POST",
      path,
      `body = request.get_json(silent=True) or {}
if not isinstance(body, dict):
    return jsonify(error="email and pin must be strings"), 400
${checkPy}found = next((document for document in ${vault} if matches_filter(document, {"email": body.get("email"), "pin": body.get("pin")})), None)
if found is None:
    return jsonify(error="wrong pin"), 401
return jsonify(email=found["email"], balance=found["balance"])`,
    ),
  };
  return {
    endpoint,
    top: {
      node: `const ${vault} = ${documents};`,
      python: `${vault} = json.loads(${JSON.stringify(documents)})`,
    },
    title: vulnerable
      ? 'NoSQL operator injection opens any locker ({"$ne": null} as the pin)'
      : "The locker filter takes the pin from JSON",
    ...(vulnerable ? {} : { why: "email and pin must be strings, so no operator object reaches the filter" }),
    oracle: async (client) => {
      const answer = await client.ask({
        method: "POST",
        path,
        json: { email: "alice@corpus.test", pin: { $ne: null } },
      });
      return verdict(answer.status === 200 && answer.text.includes("balance"), brief(answer));
    },
  };
}

const PICKLE_POW = Buffer.from("cbuiltins\npow\n(I7\nI5\ntR.").toString("base64");
const YAML_POW = "!!python/object/apply:builtins.pow [7, 5]";
const NODE_POW = JSON.stringify({ reminder: "_$$ND_FUNC$$_function(){ return 7 ** 5; }()" });

export function buildInsecureDeserialization(row: Row<DeserializationKnobs>, ctx: BuildContext): Built {
  const { format } = row.knobs;
  const vulnerable = row.label === "vulnerable";
  const path = `${ctx.place.base}/restore`;
  const load = {
    pickle: {
      python: vulnerable
        ? "value = pickle.loads(base64.b64decode(state))"
        : "value = json.loads(base64.b64decode(state))",
      node: vulnerable ? "" : 'value = JSON.parse(Buffer.from(state, "base64").toString("utf8"));',
    },
    yaml: {
      python: vulnerable ? "value = yaml.load(state, Loader=yaml.Loader)" : "value = yaml.safe_load(state)",
      node: "",
    },
    "node-serialize": {
      python: "",
      node: vulnerable ? "value = unserialize(state);" : "value = JSON.parse(state);",
    },
  }[format];
  const endpoint: Endpoint = {
    method: "POST",
    path,
    summary: "Restore a saved draft",
    access: "user",
    body: { contentType: "application/json", schema: obj({ state: STR }), required: true },
    responses: {
      "200": json("the restored draft", obj({ restored: {} })),
      "400": err("the draft cannot be read"),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "POST",
      path,
      `const state = String((request.body ?? {}).state ?? "");
if (!state) return reply.code(400).send({ error: "state is required" });
let value;
try {
  ${load.node}
} catch {
  return reply.code(400).send({ error: "the draft cannot be read" });
}
return { restored: value };`,
    ),
    python: pyRoute(
      "POST",
      path,
      `require_user()
state = str((request.get_json(silent=True) or {}).get("state", ""))
if not state:
    return jsonify(error="state is required"), 400
try:
    ${load.python}
    json.dumps(value)
except Exception:
    return jsonify(error="the draft cannot be read"), 400
return jsonify(restored=value)`,
    ),
  };
  const payload = { pickle: PICKLE_POW, yaml: YAML_POW, "node-serialize": NODE_POW }[format];
  const words = {
    pickle: "pickle",
    yaml: "yaml.load with the full loader",
    "node-serialize": "a node-serialize style reviver",
  }[format];
  return {
    endpoint,
    title: vulnerable
      ? `Drafts are restored with ${words}: a crafted draft calls functions`
      : `Drafts are restored from client-held state`,
    ...(vulnerable
      ? {}
      : {
          why: `the state is parsed as ${format === "yaml" ? "YAML with the safe loader" : "JSON"}; nothing is called`,
        }),
    oracle: async (client) => {
      const answer = await client.ask({ as: "alice", method: "POST", path, json: { state: payload } });
      return verdict(answer.text.includes("16807"), brief(answer));
    },
  };
}

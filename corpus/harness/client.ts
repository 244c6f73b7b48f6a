import { signInEndpoint } from "../generator/server-base.ts";
import type { CorpusServer } from "../model/servers.ts";
import type { Answer, Ask, LoopbackListener, OracleClient, Person } from "../oracles/oracle.ts";

// The oracles' HTTP client: signs each person in the server's own way (a JWT from the JSON sign-in, a
// session cookie and CSRF token from the form sign-in, or a static API key) and sends what an oracle asks.

interface Credential {
  bearer?: string;
  apiKey?: string;
  cookies?: Record<string, string>;
}

export function createClient(
  server: CorpusServer,
  baseUrl: string,
  secrets: Record<string, string>,
  listener: LoopbackListener,
  corpusRoot: string,
  browser?: OracleClient["browser"],
): OracleClient {
  const credentials = new Map<Person, Promise<Credential>>();
  const credential = (person: Person) => {
    let found = credentials.get(person);
    if (!found) {
      found = signIn(server, baseUrl, secrets, person);
      credentials.set(person, found);
    }
    return found;
  };

  const ask = async (question: Ask): Promise<Answer> => {
    const url = new URL(question.path, baseUrl);
    for (const [name, value] of Object.entries(question.query ?? {})) url.searchParams.set(name, value);
    const headers: Record<string, string> = {
      accept: "application/json, text/html;q=0.9",
      ...question.headers,
    };
    const jar: Record<string, string> = {};
    let form = question.form;
    if (question.as) {
      const held = await credential(question.as);
      if (question.bearer !== undefined) headers.authorization = `Bearer ${question.bearer}`;
      else if (held.bearer) headers.authorization = `Bearer ${held.bearer}`;
      if (held.apiKey) headers["x-api-key"] = held.apiKey;
      Object.assign(jar, held.cookies);
      if (form && held.cookies?.csrf_token && question.csrf !== false) {
        form = { csrf_token: held.cookies.csrf_token, ...form };
      }
    } else if (question.bearer !== undefined) {
      headers.authorization = `Bearer ${question.bearer}`;
    }
    Object.assign(jar, question.cookies);
    if (Object.keys(jar).length > 0) {
      headers.cookie = Object.entries(jar)
        .map(([name, value]) => `${name}=${value}`)
        .join("; ");
    }
    let body: string | undefined;
    if (question.json !== undefined) {
      body = JSON.stringify(question.json);
      headers["content-type"] = "application/json";
    } else if (form) {
      body = new URLSearchParams(form).toString();
      headers["content-type"] = "application/x-www-form-urlencoded";
    } else if (question.body !== undefined) {
      body = question.body;
      headers["content-type"] = question.contentType ?? "text/plain";
    }
    const response = await fetch(url, {
      method: question.method ?? (body === undefined ? "GET" : "POST"),
      headers,
      ...(body === undefined ? {} : { body }),
      redirect: "manual",
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    return { status: response.status, headers: response.headers, text, json };
  };

  return {
    server,
    baseUrl,
    ask,
    listener,
    secrets,
    corpusRoot,
    ...(browser ? { browser } : {}),
    token: async (person) => {
      const held = await credential(person);
      if (!held.bearer) throw new Error(`${server.name} signs ${person} in without a bearer token`);
      return held.bearer;
    },
    sessionCookie: async (person) => {
      const held = await credential(person);
      if (!held.cookies?.session)
        throw new Error(`${server.name} signs ${person} in without a session cookie`);
      return held.cookies.session;
    },
  };
}

async function signIn(
  server: CorpusServer,
  baseUrl: string,
  secrets: Record<string, string>,
  person: Person,
): Promise<Credential> {
  const upper = person.toUpperCase();
  if (server.auth === "apikey") return { apiKey: secrets[`CORPUS_${upper}_API_KEY`]! };
  const email = `${person}@corpus.test`;
  const password = secrets[`CORPUS_${upper}_PASSWORD`]!;
  const endpoint = new URL(signInEndpoint(server)!, baseUrl);
  if (server.auth === "bearer") {
    const response = await fetch(endpoint, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password }),
    });
    const body = (await response.json()) as { token?: string };
    if (!body.token) throw new Error(`${server.name}: sign-in as ${person} answered ${response.status}`);
    return { bearer: body.token };
  }
  const response = await fetch(endpoint, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ username: email, password }).toString(),
    redirect: "manual",
  });
  const cookies: Record<string, string> = {};
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(";");
    const index = pair!.indexOf("=");
    cookies[pair!.slice(0, index)] = pair!.slice(index + 1);
  }
  if (!cookies.session) throw new Error(`${server.name}: sign-in as ${person} answered ${response.status}`);
  return { cookies };
}

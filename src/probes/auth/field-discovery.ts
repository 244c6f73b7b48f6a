import type { Operation, SystemMap } from "../../map/system-map.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { joinUrl } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send } from "../session/probe-run.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import { sameShape, shapeOf } from "./answer-shape.ts";
import type { CredentialOperation } from "./credential-operations.ts";
import { classify, fieldsOf, wordsOf } from "./credential-operations.ts";

// An operation found in source or traffic may come without its fields. When its words say it signs in or
// starts a password reset, the usual field names are tried the way a person would: a profile user's real
// name (and right password, for a sign-in) under each usual name, in JSON and as a form, against an empty
// body. The shape the application answers differently from the empty body is the one it reads.

const SIGN_IN_PATH = /log-?in|sign-?in|session|authenticate/i;
const RESET_PATH = /forgot|reset|recover/i;
const IDENTITY_NAMES = ["email", "username", "login", "user"];
const ENCODINGS = ["application/json", "application/x-www-form-urlencoded"] as const;

/** POST operations whose words say sign-in or reset but whose fields nobody knows. */
export function fieldless(map: SystemMap, operations: readonly Operation[]): Operation[] {
  return operations.filter(
    (operation) =>
      operation.method.toUpperCase() === "POST" &&
      !operation.graphql &&
      !operation.form &&
      fieldsOf(operation, map).length === 0 &&
      (SIGN_IN_PATH.test(wordsOf(operation)) || RESET_PATH.test(wordsOf(operation))),
  );
}

/** The operation with the fields it was found to read, classified; undefined when no usual shape fits. */
export async function discoverFields(
  run: ProbeRun,
  operation: Operation,
  user: ProfileUser,
  password: string,
  preferred: string | undefined,
): Promise<CredentialOperation | undefined> {
  const signIn = SIGN_IN_PATH.test(wordsOf(operation));
  const identity = user.username ?? user.name;
  const names = [...new Set([...(preferred ? [preferred] : []), ...IDENTITY_NAMES])];
  for (const encoding of ENCODINGS) {
    const empty = await post(run, operation, encoding, {});
    if (!empty?.response || empty.response.status >= 500) continue;
    const emptyShape = shapeOf(empty, []);
    for (const name of names) {
      if (name === "email" && !identity.includes("@")) continue;
      const fields: Record<string, string> = signIn ? { [name]: identity, password } : { [name]: identity };
      const answer = await post(run, operation, encoding, fields);
      const status = answer?.response?.status ?? 0;
      if (!answer || status === 0 || status >= 400) continue;
      if (sameShape(shapeOf(answer, [identity]), emptyShape)) continue;
      const properties = Object.fromEntries(Object.keys(fields).map((field) => [field, { type: "string" }]));
      const typed: Operation = {
        ...operation,
        request_body: {
          content_type: encoding,
          required: true,
          schema: { type: "object", properties, required: Object.keys(fields) },
        },
      };
      const classified = classify(
        typed,
        Object.keys(fields).map((field) => ({ name: field, type: field === "email" ? "email" : undefined })),
      );
      if (classified) return classified;
    }
  }
  return undefined;
}

async function post(
  run: ProbeRun,
  operation: Operation,
  encoding: (typeof ENCODINGS)[number],
  fields: Record<string, string>,
): Promise<HttpExchange | undefined> {
  const body =
    encoding === "application/json" ? JSON.stringify(fields) : new URLSearchParams(fields).toString();
  return send(run, undefined, {
    method: "POST",
    url: joinUrl(run.target.baseUrl, operation.path),
    headers: { "content-type": encoding, accept: "application/json, text/html;q=0.9, */*;q=0.8" },
    body,
  });
}

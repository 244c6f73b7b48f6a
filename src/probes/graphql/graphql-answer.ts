import type { HttpExchange } from "../http/http-types.ts";

// How a probe reads what a GraphQL endpoint answered. GraphQL reports failures inside a 200: an answer
// with `errors` failed whatever its status, and an error's message or extensions can carry a SQL error
// or a stack trace that a plain status check never sees.

export interface GraphqlError {
  message: string;
  path?: Array<string | number>;
  locations?: Array<{ line: number; column: number }>;
  extensions?: Record<string, unknown>;
}

export interface GraphqlAnswer {
  /** `data` as answered (null when execution failed before any field, undefined when absent). */
  data: unknown;
  errors: GraphqlError[];
  /** True when the answer carries any error: the operation did not (wholly) succeed, even on a 200. */
  failed: boolean;
}

/** The GraphQL answer of an exchange, or undefined when the body is not one (HTML, a plain 404, no JSON). */
export function graphqlAnswer(exchange: HttpExchange | undefined): GraphqlAnswer | undefined {
  return answerOf(exchange?.response?.json);
}

/** Every answer of a batched request (a JSON array of answers); a single answer gives a list of one. */
export function graphqlAnswers(exchange: HttpExchange | undefined): GraphqlAnswer[] {
  const json = exchange?.response?.json;
  const items = Array.isArray(json) ? json : [json];
  return items.map(answerOf).filter((answer): answer is GraphqlAnswer => answer !== undefined);
}

/** Reads one parsed answer object. */
export function answerOf(json: unknown): GraphqlAnswer | undefined {
  if (!json || typeof json !== "object" || Array.isArray(json)) return undefined;
  const record = json as Record<string, unknown>;
  if (!("data" in record) && !("errors" in record)) return undefined;
  const errors = errorsOf(record.errors);
  return { data: record.data, errors, failed: errors.length > 0 };
}

/** All error text of an answer (messages and extensions), for the signature checks that look for leaks. */
export function graphqlErrorText(answer: GraphqlAnswer | undefined): string {
  if (!answer) return "";
  return answer.errors
    .map((error) => [error.message, error.extensions ? JSON.stringify(error.extensions) : ""].join("\n"))
    .join("\n");
}

/** The value `data.<field>` answered for an operation's root field (undefined when absent). */
export function fieldValue(answer: GraphqlAnswer | undefined, field: string): unknown {
  const data = answer?.data;
  return data && typeof data === "object" ? (data as Record<string, unknown>)[field] : undefined;
}

function errorsOf(value: unknown): GraphqlError[] {
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((item): GraphqlError => {
    if (typeof item === "string") return { message: item };
    if (!item || typeof item !== "object") return { message: String(item) };
    const record = item as Record<string, unknown>;
    const error: GraphqlError = {
      message: typeof record.message === "string" ? record.message : JSON.stringify(record.message ?? record),
    };
    if (Array.isArray(record.path))
      error.path = record.path.filter(
        (entry): entry is string | number => typeof entry === "string" || typeof entry === "number",
      );
    if (Array.isArray(record.locations)) error.locations = record.locations as GraphqlError["locations"];
    if (record.extensions && typeof record.extensions === "object")
      error.extensions = record.extensions as Record<string, unknown>;
    return error;
  });
}

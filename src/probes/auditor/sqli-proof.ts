import type { ReproAssertion } from "../evidence/failing-test.ts";
import type { Dbms } from "./sql-signatures.ts";
import type { Shot } from "./sqli-shots.ts";

// What a confirmed SQL injection carries out of its technique: the exchanges that prove it, in words, and
// the assertions of the generated test that fails while the flaw is there.

export type SqliTechnique = "error-based" | "blind-error" | "boolean" | "time-based";

export interface SqliProof {
  technique: SqliTechnique;
  /** Where the value sits in the SQL: `string (')`, `numeric`, `sort key`… */
  context: string;
  dbms?: Dbms;
  /** The exchanges in the order a reader should see them (each shot's label names its step). */
  evidence: Shot[];
  detail: string;
  assertions: ReproAssertion[];
  /** A condition that widened the query returned more than the baseline did (rows the filter hid). */
  widened?: boolean;
}

/** The test step that fails while a pair that must answer alike answers differently. */
export function sameAnswerAssertion(a: Shot, b: Shot, message: string): ReproAssertion {
  return { kind: "same_response", steps: [a.label, b.label], strip: [a.value, b.value], message };
}

export function describeShot(shot: Shot): string {
  const response = shot.exchange?.response;
  return response ? `${response.status}, ${response.body.length} bytes` : "no answer";
}

import type {
  HttpSemanticsKnobs,
  UnhandledErrorKnobs,
  ValidationKnobs,
} from "../generator/families/api-behaviour.ts";
import type {
  ContractDriftKnobs,
  UndocumentedStatusKnobs,
  WrongStatusKnobs,
} from "../generator/families/api-status.ts";
import { rowMaker } from "../model/row.ts";
import { NP, NS, PK, PP, PS } from "../model/servers.ts";

// API behaviour: statuses, contracts (document servers only), unusual-but-valid inputs, validation and
// HTTP method semantics.

const status = rowMaker<WrongStatusKnobs>("wrong-status", "medium");

export const WRONG_STATUS = [
  status.v("WS-01", NS, { flaw: "error-200" }),
  status.s("WS-01S", NS, { flaw: "error-200" }),
  status.v("WS-02", PK, { flaw: "client-error-500" }),
  status.s("WS-02S", PK, { flaw: "client-error-500" }),
  status.v("WS-03", PS, { flaw: "auth-error-200" }),
  status.s("WS-03S", PS, { flaw: "auth-error-200" }),
  status.v("WS-04", PS, { flaw: "error-200" }),
  status.v("WS-05", NP, { flaw: "client-error-500" }),
  status.s("WS-05S", NP, { flaw: "client-error-500" }),
  status.v("WS-06", NP, { flaw: "auth-error-200" }),
  status.v("WS-07", PP, { flaw: "error-200" }),
  status.s("WS-07S", PP, { flaw: "error-200" }),
  status.v("WS-08", PK, { flaw: "client-error-500" }),
  status.s("WS-08S", PK, { flaw: "auth-error-200" }),
  // Without a document's promise: an empty 200 for a missing record, a 200 among 201 creations.
  status.v("WS-09", PS, { flaw: "missing-200-empty", empty: "null" }, "low"),
  status.s("WS-09S", PS, { flaw: "missing-200-empty" }),
  status.s("WS-10S", PS, { flaw: "missing-200-empty", lookalike: "search-empty" }),
  status.v("WS-11", PS, { flaw: "create-200-inconsistent" }, "low"),
  status.s("WS-11S", PS, { flaw: "create-200-inconsistent" }),
  status.s("WS-12S", PS, { flaw: "create-200-inconsistent", lookalike: "upsert-200" }),
  status.v("WS-13", NP, { flaw: "missing-200-empty", empty: "object" }, "low"),
  status.s("WS-13S", NP, { flaw: "missing-200-empty", lookalike: "search-empty" }),
  status.v("WS-14", NP, { flaw: "create-200-inconsistent" }, "low"),
  status.s("WS-14S", NP, { flaw: "create-200-inconsistent", lookalike: "upsert-200" }),
];

const undocumented = rowMaker<UndocumentedStatusKnobs>("undocumented-status", "low");

export const UNDOCUMENTED_STATUS = [
  undocumented.v("UST-01", NS, {}),
  undocumented.s("UST-01S", NS, {}),
  undocumented.v("UST-02", NP, {}),
  undocumented.s("UST-02S", NP, {}),
  undocumented.v("UST-03", PP, {}),
  undocumented.s("UST-03S", PP, {}),
];

const drift = rowMaker<ContractDriftKnobs>("contract-drift", "medium");

export const CONTRACT_DRIFT = [
  drift.v("DRIFT-01", NS, { drift: "renamed" }),
  drift.v("DRIFT-02", NS, { drift: "retyped" }),
  drift.v("DRIFT-03", PK, { drift: "nullable" }),
  drift.v("DRIFT-04", PK, { drift: "missing-required" }),
  drift.s("DRIFT-01S", NS, { lookalike: "declared-nullable" }),
  drift.s("DRIFT-02S", NS, { lookalike: "exact" }),
  drift.v("DRIFT-05", NP, { drift: "retyped" }),
  drift.v("DRIFT-06", NP, { drift: "nullable" }),
  drift.s("DRIFT-05S", NP, { lookalike: "optional-absent" }),
  drift.v("DRIFT-07", PP, { drift: "renamed" }),
  drift.v("DRIFT-08", PP, { drift: "missing-required" }),
  drift.v("DRIFT-09", PK, { drift: "nullable" }),
  drift.s("DRIFT-09S", PK, { lookalike: "declared-nullable" }),
  drift.v("DRIFT-10", PK, { drift: "retyped" }),
  drift.s("DRIFT-07S", PP, { lookalike: "exact" }),
  drift.s("DRIFT-08S", PP, { lookalike: "declared-nullable" }),
];

const unhandled = rowMaker<UnhandledErrorKnobs>("unhandled-error", "medium");

export const UNHANDLED_ERROR = [
  unhandled.v("UNH-01", NS, { trigger: "omitted-optional" }),
  unhandled.s("UNH-01S", NS, { trigger: "omitted-optional" }),
  unhandled.v("UNH-02", NS, { trigger: "unicode" }),
  unhandled.s("UNH-02S", NS, { trigger: "unicode" }),
  unhandled.v("UNH-03", PK, { trigger: "empty-array" }),
  unhandled.v("UNH-04", PS, { trigger: "apostrophe" }),
  unhandled.s("UNH-04S", PS, { trigger: "apostrophe" }),
  unhandled.v("UNH-05", PS, { trigger: "boundary-number" }),
  unhandled.s("UNH-05S", PS, { trigger: "boundary-number" }),
  unhandled.v("UNH-06", PK, { trigger: "long-string" }),
  unhandled.v("UNH-07", NP, { trigger: "long-string" }),
  unhandled.s("UNH-07S", NP, { trigger: "long-string" }),
  unhandled.v("UNH-08", NP, { trigger: "boundary-number" }),
  unhandled.s("UNH-08S", NP, { trigger: "boundary-number" }),
  unhandled.v("UNH-09", NP, { trigger: "apostrophe" }),
  unhandled.v("UNH-10", PP, { trigger: "unicode" }),
  unhandled.s("UNH-10S", PP, { trigger: "unicode" }),
  unhandled.v("UNH-11", PP, { trigger: "empty-array" }),
  unhandled.s("UNH-11S", PP, { trigger: "empty-array" }),
  unhandled.v("UNH-12", PK, { trigger: "omitted-optional" }),
  unhandled.s("UNH-12S", PK, { trigger: "omitted-optional" }),
];

const validation = rowMaker<ValidationKnobs>("validation-missing", "medium");

export const VALIDATION_MISSING = [
  validation.v("VAL-01", NS, { rule: "wrong-type" }),
  validation.s("VAL-01S", NS, { rule: "wrong-type" }),
  validation.v("VAL-02", PK, { rule: "negative-quantity" }),
  validation.s("VAL-02S", PK, { rule: "negative-quantity" }),
  validation.v("VAL-03", PS, { rule: "enum" }),
  validation.s("VAL-03S", PS, { rule: "enum" }),
  validation.v("VAL-04", PK, { rule: "negative-quantity" }),
  validation.v("VAL-05", NP, { rule: "wrong-type" }),
  validation.s("VAL-05S", NP, { rule: "wrong-type" }),
  validation.v("VAL-06", NP, { rule: "enum" }),
  validation.v("VAL-07", PP, { rule: "negative-quantity" }),
  validation.s("VAL-07S", PP, { rule: "negative-quantity" }),
  validation.v("VAL-08", PK, { rule: "enum" }),
  validation.s("VAL-08S", PK, { rule: "enum" }),
];

const semantics = rowMaker<HttpSemanticsKnobs>("http-semantics", "medium");

export const HTTP_SEMANTICS = [
  semantics.v("SEM-01", NS, { flaw: "get-side-effect" }),
  semantics.s("SEM-01S", NS, { flaw: "get-side-effect" }),
  semantics.v("SEM-02", PK, { flaw: "delete-twice" }),
  semantics.v("SEM-03", PS, { flaw: "put-not-idempotent" }),
  semantics.s("SEM-03S", PS, { flaw: "put-not-idempotent" }),
  semantics.v("SEM-04", NP, { flaw: "delete-twice" }),
  semantics.s("SEM-04S", NP, { flaw: "delete-twice" }),
  semantics.v("SEM-05", PP, { flaw: "get-side-effect" }),
  semantics.s("SEM-05S", PP, { flaw: "get-side-effect" }),
  semantics.v("SEM-06", PK, { flaw: "put-not-idempotent" }),
  semantics.s("SEM-06S", PK, { flaw: "put-not-idempotent" }),
];

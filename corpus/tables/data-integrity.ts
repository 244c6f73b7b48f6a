import type { DerivedKnobs } from "../generator/families/data-derived.ts";
import type { LostUpdateKnobs } from "../generator/families/data-lost-update.ts";
import type { TransitionKnobs } from "../generator/families/data-transitions.ts";
import { rowMaker } from "../model/row.ts";
import { NP, NS, PK, PP } from "../model/servers.ts";

// Data integrity: one-shot transitions done twice (in turn, or at once past a check made before the
// write), derived totals left stale by an update of their parts, and changes from a stale version that
// overwrite newer ones. Every variant is a small JSON API over a table of its own; the cookie server
// without a document is left out, since its JSON operations are not reachable without a contract.

const repeated = rowMaker<TransitionKnobs>("repeated-transition", "high");

export const REPEATED_TRANSITION = [
  repeated.v("RTR-01", NS, { verb: "return" }),
  repeated.s("RTR-01S", NS, { verb: "return", repeat: "conflict" }),
  repeated.v("RTR-02", PP, { verb: "pay" }),
  repeated.s("RTR-02S", PP, { verb: "pay", repeat: "idempotent" }),
  repeated.v("RTR-03", NP, { verb: "cancel" }),
  repeated.s("RTR-03S", NP, { verb: "cancel", repeat: "conflict" }),
  repeated.v("RTR-04", PK, { verb: "redeem" }),
  repeated.s("RTR-04S", PK, { verb: "redeem", repeat: "idempotent" }),
  repeated.v("RTR-05", NS, { verb: "approve" }, "medium"),
  // The number lives on the parent the record was created under (a title's stock, an account's total).
  repeated.v("RTR-06", NP, { verb: "pay", counter: "parent" }),
  repeated.s("RTR-06S", PK, { verb: "return", counter: "parent", repeat: "idempotent" }),
  repeated.v("RTR-07", PP, { verb: "return", counter: "parent" }),
];

const race = rowMaker<TransitionKnobs>("double-submit-race", "high");

export const DOUBLE_SUBMIT_RACE = [
  race.v("DSR-01", PK, { verb: "pay" }),
  race.s("DSR-01S", PK, { verb: "pay", repeat: "conflict" }),
  race.v("DSR-02", NP, { verb: "redeem" }),
  race.s("DSR-02S", NP, { verb: "redeem", repeat: "conflict" }),
  race.v("DSR-03", PP, { verb: "return" }),
  race.s("DSR-03S", PP, { verb: "return", repeat: "idempotent" }),
  race.v("DSR-04", NS, { verb: "cancel" }),
  race.v("DSR-05", PK, { verb: "approve", counter: "parent" }),
  race.s("DSR-05S", NS, { verb: "pay", counter: "parent", repeat: "conflict" }),
  // A payment made once per Idempotency-Key: the key looked up before a slow charge, or kept unique.
  race.v("DSR-06", NP, { verb: "pay", shape: "idempotency-key" }),
  race.s("DSR-06S", NS, { verb: "pay", shape: "idempotency-key" }),
  race.s("DSR-07S", PP, { verb: "pay", shape: "idempotency-key" }),
  race.v("DSR-07", PK, { verb: "pay", shape: "idempotency-key" }),
];

const derived = rowMaker<DerivedKnobs>("stale-derived-field", "medium");

export const STALE_DERIVED_FIELD = [
  derived.v("SDF-01", NS, { relation: "product", method: "PATCH" }),
  derived.s("SDF-01S", NS, { relation: "product", method: "PATCH" }),
  derived.v("SDF-02", PP, { relation: "lines-sum", method: "PUT" }),
  derived.s("SDF-02S", PP, { relation: "lines-sum", method: "PUT" }),
  derived.v("SDF-03", NP, { relation: "sum", method: "PATCH" }),
  derived.s("SDF-03S", NP, { relation: "sum", method: "PUT" }),
  derived.v("SDF-04", PK, { relation: "lines-count", method: "PATCH" }),
  derived.s("SDF-04S", PK, { relation: "lines-count", method: "PATCH" }),
  derived.v("SDF-05", PK, { relation: "lines-product", method: "PUT" }),
  derived.s("SDF-05S", NS, { relation: "lines-product", method: "PATCH" }),
];

const lost = rowMaker<LostUpdateKnobs>("lost-update", "medium");

export const LOST_UPDATE = [
  lost.v("LUP-01", NS, { token: "version-field", method: "PUT" }),
  lost.s("LUP-01S", NS, { token: "version-field", method: "PUT" }),
  lost.v("LUP-02", PP, { token: "if-match", method: "PATCH" }),
  lost.s("LUP-02S", PP, { token: "if-match", method: "PATCH" }),
  lost.v("LUP-03", NP, { token: "version-field", method: "PATCH" }),
  lost.s("LUP-03S", NP, { token: "if-match", method: "PUT" }),
  lost.v("LUP-04", PK, { token: "if-match", method: "PUT" }),
  lost.s("LUP-04S", PK, { token: "version-field", method: "PUT" }),
];

export const DATA_INTEGRITY = [
  ...REPEATED_TRANSITION,
  ...DOUBLE_SUBMIT_RACE,
  ...STALE_DERIVED_FIELD,
  ...LOST_UPDATE,
];

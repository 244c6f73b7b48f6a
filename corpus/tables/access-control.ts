import type { ClientPriceKnobs } from "../generator/families/client-price.ts";
import type { CookieFlagKnobs } from "../generator/families/cookie-flag.ts";
import type { FunctionAuthorizationKnobs } from "../generator/families/function-authorization.ts";
import type { MassAssignmentKnobs } from "../generator/families/mass-assignment.ts";
import type { MissingAuthenticationKnobs } from "../generator/families/missing-authentication.ts";
import type { ObjectAuthorizationKnobs } from "../generator/families/object-authorization.ts";
import { rowMaker } from "../model/row.ts";
import { NP, NS, PK, PP, PS } from "../model/servers.ts";

// Access control (OWASP API1, API2, API3, API5): whose object, which role, which fields, who at all.

const obj = rowMaker<ObjectAuthorizationKnobs>("object-authorization", "high");

export const OBJECT_AUTHORIZATION = [
  obj.v("OBJ-01", NS, { op: "read", idIn: "path", ids: "sequential" }),
  obj.s("OBJ-01S", NS, { op: "read", idIn: "path", ids: "sequential" }),
  obj.v("OBJ-02", NS, { op: "update", idIn: "path", ids: "sequential" }),
  obj.s("OBJ-02S", NS, { op: "update", idIn: "path", ids: "random" }),
  obj.v("OBJ-03", NS, { op: "delete", idIn: "path", ids: "random" }),
  obj.v("OBJ-04", PK, { op: "action", idIn: "path", ids: "sequential" }),
  obj.v("OBJ-05", PK, { op: "read", idIn: "query", ids: "sequential" }),
  obj.v("OBJ-06", NS, { op: "read", idIn: "path", ids: "sequential", nested: "parent-unchecked" }),
  obj.s("OBJ-06S", NS, { op: "read", idIn: "path", ids: "sequential", nested: "parent-unchecked" }),

  obj.v("OBJ-07", PS, { op: "read", idIn: "path", ids: "sequential" }),
  obj.s("OBJ-07S", PS, { op: "read", idIn: "path", ids: "sequential" }),
  obj.v("OBJ-08", PS, { op: "update", idIn: "body", ids: "sequential" }),
  obj.v("OBJ-09", PS, { op: "delete", idIn: "path", ids: "sequential" }),
  obj.s("OBJ-09S", PS, { op: "delete", idIn: "path", ids: "sequential" }),
  obj.v("OBJ-10", PS, { op: "action", idIn: "query", ids: "random" }),
  obj.v("OBJ-11", PS, { op: "read", idIn: "path", ids: "sequential", nested: "child-mismatch" }),
  obj.s("OBJ-11S", PS, { op: "read", idIn: "path", ids: "sequential", nested: "child-mismatch" }),
  obj.v("OBJ-12", PK, { op: "read", idIn: "path", ids: "random" }),

  obj.v("OBJ-13", NP, { op: "read", idIn: "path", ids: "random" }),
  obj.s("OBJ-13S", NP, { op: "read", idIn: "path", ids: "random" }),
  obj.v("OBJ-14", NP, { op: "update", idIn: "path", ids: "sequential" }),
  obj.v("OBJ-15", PK, { op: "delete", idIn: "query", ids: "sequential" }),
  obj.v("OBJ-16", NP, { op: "action", idIn: "body", ids: "sequential" }),
  obj.s("OBJ-16S", NP, { op: "action", idIn: "body", ids: "sequential" }),
  obj.v("OBJ-17", NP, { op: "update", idIn: "path", ids: "sequential", nested: "parent-unchecked" }),
  obj.s("OBJ-17S", NP, { op: "update", idIn: "path", ids: "sequential", nested: "parent-unchecked" }),

  obj.v("OBJ-18", PP, { op: "read", idIn: "path", ids: "sequential" }),
  obj.s("OBJ-18S", PP, { op: "read", idIn: "path", ids: "sequential" }),
  obj.v("OBJ-19", PK, { op: "update", idIn: "query", ids: "sequential" }),
  obj.s("OBJ-19S", PK, { op: "update", idIn: "query", ids: "sequential" }),
  obj.v("OBJ-20", PK, { op: "delete", idIn: "body", ids: "sequential" }),
  obj.v("OBJ-21", PK, { op: "action", idIn: "path", ids: "random" }),
  obj.s("OBJ-21S", PK, { op: "action", idIn: "path", ids: "random" }),
  obj.v("OBJ-22", PP, { op: "read", idIn: "body", ids: "sequential" }),
  obj.s("OBJ-22S", PP, { op: "read", idIn: "body", ids: "sequential" }),
  obj.v("OBJ-23", PP, { op: "delete", idIn: "path", ids: "sequential", nested: "child-mismatch" }),
  obj.s("OBJ-23S", PP, { op: "delete", idIn: "path", ids: "sequential", nested: "child-mismatch" }),
];

const fun = rowMaker<FunctionAuthorizationKnobs>("function-authorization", "high");

export const FUNCTION_AUTHORIZATION = [
  fun.v("FUN-01", NS, { op: "directory", signal: "path" }),
  fun.s("FUN-01S", NS, { op: "directory", signal: "path" }),
  fun.v("FUN-02", NS, { op: "approve", signal: "doc" }),
  fun.s("FUN-02S", NS, { op: "approve", signal: "doc" }),
  fun.v("FUN-03", PK, { op: "settings", signal: "path" }),

  fun.v("FUN-04", PS, { op: "directory", signal: "path" }),
  fun.v("FUN-05", PS, { op: "export", signal: "path" }),
  fun.s("FUN-04S", PS, { op: "export", signal: "path" }),
  fun.s("FUN-05S", PS, { op: "settings", signal: "path" }),

  fun.v("FUN-06", NP, { op: "export", signal: "doc" }),
  fun.v("FUN-07", NP, { op: "approve", signal: "path" }),
  fun.v("FUN-08", PK, { op: "settings", signal: "doc" }),
  fun.s("FUN-06S", NP, { op: "directory", signal: "path" }),
  fun.s("FUN-07S", NP, { op: "settings", signal: "doc" }),

  fun.v("FUN-09", PP, { op: "export", signal: "path" }),
  fun.v("FUN-10", PP, { op: "directory", signal: "doc" }),
  fun.v("FUN-11", PK, { op: "approve", signal: "path" }),
  fun.s("FUN-11S", PK, { op: "approve", signal: "path" }),
  fun.s("FUN-09S", PP, { op: "approve", signal: "path" }),
  fun.s("FUN-10S", PP, { op: "export", signal: "doc" }),
];

const mas = rowMaker<MassAssignmentKnobs>("mass-assignment", "high");

export const MASS_ASSIGNMENT = [
  mas.v("MAS-01", NS, { field: "role", verb: "create" }),
  mas.s("MAS-01S", NS, { field: "role", verb: "create", safeStyle: "ignore" }),
  mas.v("MAS-02", NS, { field: "price", verb: "create" }),
  mas.s("MAS-02S", NS, { field: "price", verb: "create", safeStyle: "reject" }),
  mas.v("MAS-03", PK, { field: "owner", verb: "update" }),

  mas.v("MAS-04", PS, { field: "role", verb: "update" }),
  mas.s("MAS-04S", PS, { field: "role", verb: "update", safeStyle: "reject" }),
  mas.v("MAS-05", PS, { field: "owner", verb: "create" }),

  mas.v("MAS-06", NP, { field: "price", verb: "update" }),
  mas.s("MAS-06S", NP, { field: "price", verb: "update", safeStyle: "ignore" }),
  mas.v("MAS-07", NP, { field: "role", verb: "create" }),
  mas.v("MAS-08", NP, { field: "owner", verb: "create" }),
  mas.s("MAS-08S", NP, { field: "owner", verb: "create", safeStyle: "reject" }),

  mas.v("MAS-09", PP, { field: "price", verb: "create" }),
  mas.s("MAS-09S", PP, { field: "price", verb: "create", safeStyle: "ignore" }),
  mas.v("MAS-10", PP, { field: "owner", verb: "update" }),
  mas.s("MAS-10S", PP, { field: "owner", verb: "update", safeStyle: "ignore" }),
  mas.v("MAS-11", PK, { field: "role", verb: "create" }),
  mas.s("MAS-11S", PK, { field: "role", verb: "create", safeStyle: "reject" }),
];

// A price, total or fee an order form fixes (read-only or hidden) and the handler stores as sent. The safe
// twins compute it from the product and the quantity, or refuse an order whose figure differs.
const price = rowMaker<ClientPriceKnobs>("client-price", "high");

export const CLIENT_PRICE = [
  price.v("CPR-01", NS, { field: "price", control: "readonly" }),
  price.s("CPR-01S", NS, { field: "price", control: "readonly", guard: "computed" }),
  price.v("CPR-02", PP, { field: "total", control: "hidden" }),
  price.s("CPR-02S", PP, { field: "total", control: "hidden", guard: "checked" }),
  price.v("CPR-03", PK, { field: "unit_price", control: "readonly" }),
  price.s("CPR-03S", PK, { field: "unit_price", control: "readonly", guard: "checked" }),
  price.v("CPR-04", NP, { field: "fee", control: "hidden" }),
  price.s("CPR-04S", NP, { field: "fee", control: "hidden", guard: "computed" }),
  price.v("CPR-05", PS, { field: "price", control: "hidden" }),
  price.s("CPR-05S", PS, { field: "total", control: "readonly", guard: "computed" }),
  price.v("CPR-06", NP, { field: "price", control: "json" }),
  price.s("CPR-06S", NP, { field: "price", control: "json", guard: "computed" }),
  price.v("CPR-07", PP, { field: "unit_price", control: "json" }),
  price.s("CPR-07S", PP, { field: "unit_price", control: "json", guard: "checked" }),
];

const authn = rowMaker<MissingAuthenticationKnobs>("missing-authentication", "high");

export const MISSING_AUTHENTICATION = [
  authn.v("AUTHN-01", NS, { data: "private-list" }),
  authn.s("AUTHN-01S", NS, { data: "private-list", safeStyle: "public" }),
  authn.v("AUTHN-02", NS, { data: "write" }),
  authn.s("AUTHN-02S", NS, { data: "write", safeStyle: "enforced" }),
  authn.v("AUTHN-03", PK, { data: "profile" }),

  authn.v("AUTHN-04", PS, { data: "private-list" }),
  authn.s("AUTHN-04S", PS, { data: "private-list", safeStyle: "enforced" }),
  authn.v("AUTHN-05", PS, { data: "profile" }),
  authn.s("AUTHN-05S", PS, { data: "profile", safeStyle: "public" }),

  authn.v("AUTHN-06", NP, { data: "profile" }),
  authn.s("AUTHN-06S", NP, { data: "profile", safeStyle: "public" }),
  authn.v("AUTHN-07", NP, { data: "write" }),
  authn.s("AUTHN-07S", NP, { data: "profile", safeStyle: "enforced" }),

  authn.v("AUTHN-08", PP, { data: "private-list" }),
  authn.s("AUTHN-08S", PP, { data: "private-list", safeStyle: "public" }),
  authn.v("AUTHN-09", PP, { data: "write" }),
  authn.s("AUTHN-09S", PP, { data: "write", safeStyle: "enforced" }),
  authn.v("AUTHN-10", PK, { data: "profile" }),
  authn.s("AUTHN-10S", PK, { data: "profile", safeStyle: "enforced" }),
  authn.v("AUTHN-11", PS, { data: "export" }),
  authn.s("AUTHN-11S", PS, { data: "export", safeStyle: "enforced" }),
  authn.v("AUTHN-12", NS, { data: "export" }),
  authn.s("AUTHN-12S", NS, { data: "export", safeStyle: "enforced" }),
];

const flag = rowMaker<CookieFlagKnobs>("cookie-flag", "high");

export const COOKIE_FLAG = [
  flag.v("FLAG-01", NS, { flag: "boolean", refusal: "status" }),
  flag.s("FLAG-01S", NS, { flag: "boolean", refusal: "status", guard: "signed" }),
  flag.v("FLAG-02", PS, { flag: "role", refusal: "message" }),
  flag.s("FLAG-02S", PS, { flag: "role", refusal: "message", guard: "ignored" }),
  flag.v("FLAG-03", NP, { flag: "toggle", refusal: "message" }),
  flag.s("FLAG-03S", NP, { flag: "toggle", refusal: "status", guard: "cosmetic" }),
  flag.v("FLAG-04", PP, { flag: "digit", refusal: "status" }),
  flag.s("FLAG-04S", PP, { flag: "digit", refusal: "status", guard: "signed" }),
  flag.v("FLAG-05", PK, { flag: "boolean", refusal: "message" }),
  flag.s("FLAG-05S", PK, { flag: "role", refusal: "status", guard: "ignored" }),
];

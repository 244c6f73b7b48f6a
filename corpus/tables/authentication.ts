import type {
  BruteForceKnobs,
  ResetTokenKnobs,
  UserEnumerationKnobs,
} from "../generator/families/sign-in-variants.ts";
import type { TokenForgeryKnobs } from "../generator/families/token-forgery.ts";
import { rowMaker } from "../model/row.ts";
import { NP, NS, PK, PP, PS } from "../model/servers.ts";

// Authentication (OWASP A07, API2): forgeable tokens, telling answers, unlimited guessing, reset tokens
// handed back.

const jwt = rowMaker<TokenForgeryKnobs>("token-forgery", "critical");

export const TOKEN_FORGERY = [
  jwt.v("JWT-01", NS, { mode: "alg-none" }),
  jwt.v("JWT-02", NS, { mode: "weak-secret", secret: "secret" }),
  jwt.v("JWT-03", NS, { mode: "expired" }, "high"),
  jwt.v("JWT-04", NS, { mode: "unsigned-payload" }),
  jwt.s("JWT-01S", NS, { mode: "strict" }),
  jwt.s("JWT-02S", NS, { mode: "strict" }),

  jwt.v("JWT-05", PP, { mode: "alg-none" }),
  jwt.v("JWT-06", PP, { mode: "weak-secret", secret: "your-256-bit-secret" }),
  jwt.v("JWT-07", PP, { mode: "expired" }, "high"),
  jwt.v("JWT-08", PP, { mode: "unsigned-payload" }),
  jwt.s("JWT-05S", PP, { mode: "strict" }),
  jwt.s("JWT-06S", PP, { mode: "strict" }),
];

const enumeration = rowMaker<UserEnumerationKnobs>("user-enumeration", "medium");

export const USER_ENUMERATION = [
  enumeration.v("ENUM-01", NS, { via: "sign-in", tell: "message" }),
  enumeration.s("ENUM-01S", NS, { via: "sign-in", tell: "message" }),
  enumeration.v("ENUM-02", PK, { via: "reset", tell: "status" }),

  enumeration.v("ENUM-03", PS, { via: "sign-in", tell: "status" }),
  enumeration.s("ENUM-03S", PS, { via: "sign-in", tell: "status" }),
  enumeration.v("ENUM-04", PS, { via: "reset", tell: "message" }),
  enumeration.s("ENUM-04S", PS, { via: "reset", tell: "message" }),

  enumeration.v("ENUM-05", NP, { via: "reset", tell: "message" }),
  enumeration.s("ENUM-05S", NP, { via: "reset", tell: "message" }),

  enumeration.v("ENUM-06", PP, { via: "sign-in", tell: "message" }),
  enumeration.s("ENUM-06S", PP, { via: "sign-in", tell: "message" }),
  enumeration.v("ENUM-07", PK, { via: "reset", tell: "status" }),
  enumeration.s("ENUM-07S", PK, { via: "reset", tell: "status" }),
];

const brute = rowMaker<BruteForceKnobs>("brute-force", "medium");

export const BRUTE_FORCE = [
  brute.v("BRUTE-01", NS, { input: "json" }),
  brute.s("BRUTE-01S", NS, { input: "json" }),
  brute.v("BRUTE-02", PS, { input: "form" }),
  brute.s("BRUTE-02S", PS, { input: "form" }),
  brute.v("BRUTE-03", NP, { input: "json" }),
  brute.v("BRUTE-04", PP, { input: "json" }),
  brute.s("BRUTE-04S", PP, { input: "json" }),
];

const reset = rowMaker<ResetTokenKnobs>("reset-token-exposure", "critical");

export const RESET_TOKEN_EXPOSURE = [
  reset.v("RESET-01", NS, {}),
  reset.s("RESET-01S", NS, {}),
  reset.v("RESET-02", PS, {}),
  reset.v("RESET-03", NP, {}),
  reset.s("RESET-03S", NP, {}),
  reset.v("RESET-04", PP, {}),
  reset.s("RESET-04S", PP, {}),
];

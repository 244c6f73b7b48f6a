import type {
  ErrorDisclosureKnobs,
  ExcessiveDataKnobs,
  PasswordHashKnobs,
  SecretKnobs,
} from "../generator/families/exposure.ts";
import { rowMaker } from "../model/row.ts";
import { NP, NS, PK, PP, PS } from "../model/servers.ts";

// Sensitive data in answers (OWASP API3, CWE-200/209/522/916): hashes of every common format under the
// keys apps use, live secrets, undeclared private fields, and error bodies that say too much. Safe rows are
// digests that are not passwords', key material meant to be seen, and the same data picked field by field.

const hash = rowMaker<PasswordHashKnobs>("password-hash-exposure", "high");

export const PASSWORD_HASH_EXPOSURE = [
  hash.v("HASH-01", NS, { format: "bcrypt", key: "password_hash" }),
  hash.s("HASH-01S", NS, { lookalike: "etag" }),
  hash.v("HASH-02", PK, { format: "sha256", key: "password_digest" }),
  hash.s("HASH-02S", PK, { lookalike: "picked" }),

  hash.v("HASH-03", PS, { format: "scrypt", key: "password" }),
  hash.s("HASH-03S", PS, { lookalike: "avatar-hash" }),
  hash.v("HASH-04", PK, { format: "md5", key: "passwd" }),

  hash.v("HASH-05", NP, { format: "argon2", key: "hashed_password" }),
  hash.s("HASH-05S", NP, { lookalike: "checksum" }),
  hash.v("HASH-06", NP, { format: "sha1", key: "pwd_hash" }),
  hash.s("HASH-06S", NP, { lookalike: "password-meta" }),

  hash.v("HASH-07", PP, { format: "pbkdf2", key: "password" }),
  hash.s("HASH-07S", PP, { lookalike: "picked" }),
  hash.v("HASH-08", PK, { format: "bcrypt", key: "hashed_password" }),
  hash.s("HASH-08S", PK, { lookalike: "etag" }),
];

const secret = rowMaker<SecretKnobs>("secret-in-response", "critical");

export const SECRET_IN_RESPONSE = [
  secret.v("SECRET-01", NS, { secret: "api-key" }),
  secret.s("SECRET-01S", NS, { lookalike: "masked-key" }),
  secret.v("SECRET-02", PK, { secret: "private-key" }),

  secret.v("SECRET-03", PS, { secret: "session-token" }),
  secret.s("SECRET-03S", PS, { lookalike: "public-key" }),

  secret.v("SECRET-04", NP, { secret: "aws-key" }),
  secret.s("SECRET-04S", NP, { lookalike: "publishable-key" }),
  secret.v("SECRET-05", NP, { secret: "github-token" }),

  secret.v("SECRET-06", PP, { secret: "api-key" }),
  secret.s("SECRET-06S", PP, { lookalike: "masked-key" }),
  secret.v("SECRET-07", PK, { secret: "session-token" }),
  secret.s("SECRET-07S", PK, { lookalike: "publishable-key" }),
];

const excess = rowMaker<ExcessiveDataKnobs>("excessive-data-exposure", "medium");

export const EXCESSIVE_DATA_EXPOSURE = [
  excess.v("EXCESS-01", NS, { fields: ["date_of_birth", "home_address"] }),
  excess.s("EXCESS-01S", NS, { fields: ["date_of_birth", "home_address"] }),
  excess.v("EXCESS-02", PK, { fields: ["salary", "internal_notes"] }),
  excess.v("EXCESS-03", NP, { fields: ["national_id", "phone"] }),
  excess.s("EXCESS-03S", NP, { fields: ["national_id", "phone"] }),
  excess.v("EXCESS-04", PP, { fields: ["salary", "date_of_birth"] }),
  excess.s("EXCESS-04S", PP, { fields: ["salary", "date_of_birth"] }),
  excess.v("EXCESS-05", PK, { fields: ["home_address"] }),
  excess.s("EXCESS-05S", PK, { fields: ["home_address"] }),
];

const errors = rowMaker<ErrorDisclosureKnobs>("error-disclosure", "medium");

export const ERROR_DISCLOSURE = [
  errors.v("ERR-01", NS, { leak: "stack" }),
  errors.s("ERR-01S", NS, { leak: "stack" }),
  errors.v("ERR-02", NS, { leak: "connection-string" }, "high"),
  errors.v("ERR-03", PS, { leak: "traceback" }),
  errors.s("ERR-03S", PS, { leak: "traceback" }),
  errors.v("ERR-04", NP, { leak: "stack" }),
  errors.s("ERR-04S", NP, { leak: "stack" }),
  errors.v("ERR-05", NP, { leak: "connection-string" }, "high"),
  errors.v("ERR-06", PP, { leak: "traceback" }),
  errors.s("ERR-06S", PP, { leak: "traceback" }),
  errors.v("ERR-07", PK, { leak: "connection-string" }, "high"),
  errors.s("ERR-07S", PK, { leak: "connection-string" }),
];

import type { Row } from "../../model/row.ts";
import type { BuildContext, Built } from "../endpoint.ts";
import { buildHttpSemantics, buildUnhandledError, buildValidationMissing } from "./api-behaviour.ts";
import { buildContractDrift, buildUndocumentedStatus, buildWrongStatus } from "./api-status.ts";
import { buildClientPrice } from "./client-price.ts";
import {
  buildCommandInjection,
  buildInsecureDeserialization,
  buildNoSqlInjection,
  buildTemplateInjection,
} from "./code-injection.ts";
import { buildCookieFlag } from "./cookie-flag.ts";
import { buildStaleDerivedField } from "./data-derived.ts";
import { buildUncheckedDomain } from "./data-domains.ts";
import { buildLostUpdate } from "./data-lost-update.ts";
import { buildOrphanOnDelete } from "./data-orphans.ts";
import { buildDoubleSubmitRace, buildRepeatedTransition } from "./data-transitions.ts";
import { buildUniquenessInCode } from "./data-uniqueness.ts";
import { buildDomXss } from "./dom-xss.ts";
import {
  buildErrorDisclosure,
  buildExcessiveDataExposure,
  buildPasswordHashExposure,
  buildSecretInResponse,
} from "./exposure.ts";
import { buildPathTraversal, buildSsrf, buildXxe } from "./file-and-fetch.ts";
import { buildFileWrite } from "./file-write.ts";
import { buildFunctionAuthorization } from "./function-authorization.ts";
import { buildMassAssignment } from "./mass-assignment.ts";
import { buildDebugExposure, buildDirectoryListing, buildExposedFile } from "./misconfiguration.ts";
import { buildMissingAuthentication } from "./missing-authentication.ts";
import { buildNPlusOne } from "./n-plus-one.ts";
import { buildObjectAuthorization } from "./object-authorization.ts";
import { buildRealtimeAuthentication, buildRealtimeAuthorization } from "./realtime-access.ts";
import {
  buildRealtimeBackpressure,
  buildRealtimeOrdering,
  buildRealtimeReconnect,
} from "./realtime-delivery.ts";
import { buildRealtimeExposure } from "./realtime-exposure.ts";
import { buildRegexDos } from "./regex-dos.ts";
import { buildBruteForce, buildResetTokenExposure, buildUserEnumeration } from "./sign-in-variants.ts";
import { buildSlowEndpoint } from "./slow-endpoint.ts";
import { buildSqlInjection } from "./sql-injection.ts";
import { buildTokenForgery } from "./token-forgery.ts";
import { buildVisualDefect } from "./ui-layout.ts";
import { buildAccessibility, buildBrokenLink } from "./ui-markup.ts";
import { buildBrokenJourney, buildConsoleError } from "./ui-runtime.ts";
import { buildUnboundedResult } from "./unbounded-result.ts";
import { buildUnindexedQuery } from "./unindexed-query.ts";
import { buildUploadServe } from "./upload-serve.ts";
import { buildDeadEnd, buildMisleadingCopy, buildUndiscoverable } from "./usability.ts";
import { buildCors, buildCsrf, buildOpenRedirect, buildSecurityHeaders, buildXss } from "./web.ts";

// One builder per family: the row's knobs in, the operation and its oracle out. The tables type each
// family's knobs; here a row is only dispatched by its family name.

// biome-ignore lint/suspicious/noExplicitAny: each builder narrows its own row type
type Builder = (row: Row<any>, ctx: BuildContext) => Built;

const BUILDERS: Record<string, Builder> = {
  "sql-injection": buildSqlInjection,
  "nosql-injection": buildNoSqlInjection,
  "command-injection": buildCommandInjection,
  "template-injection": buildTemplateInjection,
  "path-traversal": buildPathTraversal,
  "path-traversal-write": buildFileWrite,
  xxe: buildXxe,
  ssrf: buildSsrf,
  xss: buildXss,
  "open-redirect": buildOpenRedirect,
  "insecure-deserialization": buildInsecureDeserialization,
  "object-authorization": buildObjectAuthorization,
  "function-authorization": buildFunctionAuthorization,
  "mass-assignment": buildMassAssignment,
  "missing-authentication": buildMissingAuthentication,
  "token-forgery": buildTokenForgery,
  "user-enumeration": buildUserEnumeration,
  "brute-force": buildBruteForce,
  "reset-token-exposure": buildResetTokenExposure,
  "password-hash-exposure": buildPasswordHashExposure,
  "secret-in-response": buildSecretInResponse,
  "excessive-data-exposure": buildExcessiveDataExposure,
  "error-disclosure": buildErrorDisclosure,
  "debug-exposure": buildDebugExposure,
  "exposed-file": buildExposedFile,
  "directory-listing": buildDirectoryListing,
  cors: buildCors,
  "security-headers": buildSecurityHeaders,
  csrf: buildCsrf,
  "wrong-status": buildWrongStatus,
  "undocumented-status": buildUndocumentedStatus,
  "contract-drift": buildContractDrift,
  "unhandled-error": buildUnhandledError,
  "validation-missing": buildValidationMissing,
  "http-semantics": buildHttpSemantics,
  "unbounded-result": buildUnboundedResult,
  "n-plus-one": buildNPlusOne,
  "unindexed-query": buildUnindexedQuery,
  "slow-endpoint": buildSlowEndpoint,
  "regex-dos": buildRegexDos,
  "client-price": buildClientPrice,
  "cookie-flag": buildCookieFlag,
  "ws-authentication": buildRealtimeAuthentication,
  "ws-authorization": buildRealtimeAuthorization,
  "ws-event-exposure": buildRealtimeExposure,
  "ws-ordering": buildRealtimeOrdering,
  "ws-reconnect": buildRealtimeReconnect,
  "ws-backpressure": buildRealtimeBackpressure,
  "uniqueness-in-code": buildUniquenessInCode,
  "unchecked-domain": buildUncheckedDomain,
  "orphan-on-delete": buildOrphanOnDelete,
  "repeated-transition": buildRepeatedTransition,
  "double-submit-race": buildDoubleSubmitRace,
  "stale-derived-field": buildStaleDerivedField,
  "lost-update": buildLostUpdate,
  "dom-xss": buildDomXss,
  "upload-xss": buildUploadServe,
  "console-error": buildConsoleError,
  "broken-link": buildBrokenLink,
  accessibility: buildAccessibility,
  "broken-journey": buildBrokenJourney,
  "visual-defect": buildVisualDefect,
  "undiscoverable-feature": buildUndiscoverable,
  "dead-end": buildDeadEnd,
  "misleading-copy": buildMisleadingCopy,
};

export function buildRow(row: Row, ctx: BuildContext): Built {
  const builder = BUILDERS[row.family];
  if (!builder) throw new Error(`no builder for family ${row.family} (row ${row.id})`);
  return builder(row, ctx);
}

export const BUILT_FAMILIES = Object.keys(BUILDERS);

import type {
  CommandInjectionKnobs,
  DeserializationKnobs,
  NoSqlKnobs,
  TemplateInjectionKnobs,
} from "../generator/families/code-injection.ts";
import type { PathTraversalKnobs, SsrfKnobs, XxeKnobs } from "../generator/families/file-and-fetch.ts";
import type { FileWriteKnobs } from "../generator/families/file-write.ts";
import { rowMaker } from "../model/row.ts";
import { NP, NS, PK, PP, PS } from "../model/servers.ts";

// Injection beyond SQL (OWASP A03, A10, CWE-78/22/611/918/1336/943/502), each with an inert oracle.

const cmd = rowMaker<CommandInjectionKnobs>("command-injection", "critical");

export const COMMAND_INJECTION = [
  cmd.v("CMD-01", NS, { input: "query", quoting: "none" }),
  cmd.s("CMD-01S", NS, { input: "query", quoting: "none", guard: "argv" }),
  cmd.v("CMD-02", PK, { input: "json", quoting: "single" }),
  cmd.v("CMD-03", PS, { input: "form", quoting: "double" }),
  cmd.s("CMD-03S", PS, { input: "form", quoting: "double", guard: "allow-list" }),
  cmd.v("CMD-04", PS, { input: "query", quoting: "none" }),
  cmd.v("CMD-05", NP, { input: "json", quoting: "double" }),
  cmd.s("CMD-05S", NP, { input: "json", quoting: "double", guard: "argv" }),
  cmd.v("CMD-06", PP, { input: "query", quoting: "single" }),
  cmd.s("CMD-06S", PP, { input: "query", quoting: "single", guard: "allow-list" }),
];

const traversal = rowMaker<PathTraversalKnobs>("path-traversal", "high");

export const PATH_TRAVERSAL = [
  traversal.v("PATH-01", NS, { input: "query", check: "none" }),
  traversal.s("PATH-01S", NS, { input: "query", guard: "resolved-check" }),
  traversal.v("PATH-02", PS, { input: "query", check: "strip-once" }),
  traversal.s("PATH-02S", PS, { input: "query", guard: "basename" }),
  traversal.v("PATH-03", PS, { input: "path", check: "none" }),
  traversal.v("PATH-04", NP, { input: "query", check: "prefix-unnormalised" }),
  traversal.s("PATH-04S", NP, { input: "path", guard: "resolved-check" }),
  traversal.v("PATH-05", PP, { input: "path", check: "strip-once" }),
  traversal.s("PATH-05S", PP, { input: "query", guard: "resolved-check" }),
];

const xxe = rowMaker<XxeKnobs>("xxe", "high");

export const XXE = [
  xxe.v("XXE-01", NS, {}),
  xxe.s("XXE-01S", NS, {}),
  xxe.v("XXE-02", PS, {}),
  xxe.s("XXE-02S", PS, {}),
  xxe.v("XXE-03", NP, {}),
  xxe.v("XXE-04", PP, {}),
  xxe.s("XXE-04S", PP, {}),
];

const ssrf = rowMaker<SsrfKnobs>("ssrf", "high");

export const SSRF = [
  ssrf.v("SSRF-01", NS, { input: "json", reflect: "full" }),
  ssrf.s("SSRF-01S", NS, { input: "json", guard: "allow-list" }),
  ssrf.v("SSRF-02", PS, { input: "query", reflect: "blind" }),
  ssrf.s("SSRF-02S", PS, { input: "query", guard: "stored-only" }),
  ssrf.v("SSRF-03", NP, { input: "json", reflect: "blind" }),
  ssrf.v("SSRF-04", PP, { input: "query", reflect: "full" }),
  ssrf.s("SSRF-04S", PP, { input: "query", guard: "allow-list" }),
  ssrf.v("SSRF-05", PS, { input: "json", shape: "parts", reflect: "blind" }),
  ssrf.s("SSRF-05S", PS, { input: "json", shape: "parts" }),
  ssrf.v("SSRF-06", NS, { input: "query", shape: "parts", reflect: "full" }),
];

const ssti = rowMaker<TemplateInjectionKnobs>("template-injection", "critical");

export const TEMPLATE_INJECTION = [
  ssti.v("SSTI-01", NS, { input: "json" }),
  ssti.s("SSTI-01S", NS, { input: "json" }),
  ssti.v("SSTI-02", PS, { input: "query" }),
  ssti.s("SSTI-02S", PS, { input: "query" }),
  ssti.v("SSTI-03", PP, { input: "json" }),
];

const nosql = rowMaker<NoSqlKnobs>("nosql-injection", "high");

export const NOSQL_INJECTION = [
  nosql.v("NOSQL-01", NS, {}),
  nosql.s("NOSQL-01S", NS, {}),
  nosql.v("NOSQL-02", NP, {}),
  nosql.s("NOSQL-02S", NP, {}),
  nosql.v("NOSQL-03", PP, {}),
];

const deser = rowMaker<DeserializationKnobs>("insecure-deserialization", "critical");

export const INSECURE_DESERIALIZATION = [
  deser.v("DESER-01", NS, { format: "node-serialize" }),
  deser.s("DESER-01S", NS, { format: "node-serialize" }),
  deser.v("DESER-02", PS, { format: "pickle" }),
  deser.s("DESER-02S", PS, { format: "pickle" }),
  deser.v("DESER-03", PP, { format: "yaml" }),
  deser.s("DESER-03S", PP, { format: "yaml" }),
];

const write = rowMaker<FileWriteKnobs>("path-traversal-write", "critical");

export const PATH_TRAVERSAL_WRITE = [
  write.v("WRITE-01", NS, { input: "json", field: "filename", check: "none" }),
  write.s("WRITE-01S", NS, { input: "json", field: "filename", guard: "basename" }),
  write.v("WRITE-02", PS, { input: "query", field: "path", check: "none" }),
  write.s("WRITE-02S", PS, { input: "json", field: "filename", guard: "resolved-check" }),
  write.v("WRITE-03", NP, { input: "json", field: "path", check: "strip-once" }),
  write.s("WRITE-03S", NP, { input: "query", field: "path", guard: "generated" }),
  write.v("WRITE-04", PP, { input: "json", field: "filename", check: "strip-once" }),
  write.s("WRITE-04S", PK, { input: "json", field: "filename", guard: "resolved-check" }),
  write.v("WRITE-05", PK, { input: "json", field: "name", check: "none" }),
  write.v("WRITE-06", PK, { input: "multipart", field: "document", check: "none" }),
  write.s("WRITE-06S", PP, { input: "multipart", field: "document", guard: "basename" }),
  write.v("WRITE-07", PP, { input: "multipart", field: "document", check: "strip-once" }),
];

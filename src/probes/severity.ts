import type { DefectClass, Severity } from "../envelope/taxonomy.ts";

/**
 * The severity rubric every probe uses, so two probes (or a probe and a person) rate alike.
 *
 * | class | critical | high | medium | low |
 * |---|---|---|---|---|
 * | injection | confirmed SQL/command injection | — | — | — |
 * | missing-authentication | anonymous writes, or anonymous reads of sensitive data | anonymous reads of private data | — | — |
 * | missing-authorization | another user or tenant can change or delete | another user or tenant can read; a lower role reaches admin data | — | — |
 * | secret-exposure | private keys or live credentials to anyone | tokens/keys of others, environment secrets | — | — |
 * | sensitive-data-exposure | — | password hashes | other users' personal data | stack traces, internals |
 * | xss | — | stored | reflected | — |
 * | misconfiguration | — | debug endpoint exposing environment/secrets; CORS reflecting any origin with credentials | exposed metrics, directory listing | missing security headers |
 * | vulnerable-dependency | advisory critical | advisory high | advisory moderate (or unrated) | advisory low |
 * | unhandled-error | — | — | any 5xx on client input | — |
 * | validation-missing | — | mass assignment of a privileged field | invalid input accepted | — |
 * | wrong-status, contract-drift | — | — | a rejected write that still changed data; a deleted resource still readable | status code or body differs from the document |
 * | undocumented-endpoint | — | — | — | an endpoint the document does not list |
 */
export interface SeverityFacts {
  anonymous?: boolean;
  /** The defect lets someone change or delete data. */
  write?: boolean;
  /** What leaked: credentials and private keys weigh most. */
  exposure?: "credential" | "hash" | "personal" | "internal" | "environment";
  stored?: boolean;
  /** A debug endpoint leaks environment values or secrets (rather than just metrics). */
  secretsExposed?: boolean;
  /** CORS reflects any origin and allows credentials. */
  credentialed?: boolean;
  /** The advisory's own rating (OSV `database_specific.severity`). */
  advisory?: string;
  privileged?: boolean;
  dataChanged?: boolean;
}

export function severityFor(defectClass: DefectClass, facts: SeverityFacts = {}): Severity {
  switch (defectClass) {
    case "injection":
    case "insecure-deserialization":
    case "xxe":
      return "critical";
    case "missing-authentication":
      return facts.write || facts.exposure === "credential" ? "critical" : "high";
    case "missing-authorization":
      return facts.write ? "critical" : "high";
    case "broken-authentication":
      return "critical";
    case "secret-exposure":
      return facts.exposure === "credential" && facts.anonymous ? "critical" : "high";
    case "sensitive-data-exposure":
      if (facts.exposure === "hash" || facts.exposure === "credential") return "high";
      return facts.exposure === "personal" ? "medium" : "low";
    case "xss":
      return facts.stored ? "high" : "medium";
    case "misconfiguration":
      if (facts.secretsExposed || facts.credentialed) return "high";
      return facts.exposure === "internal" ? "medium" : "low";
    case "vulnerable-dependency":
      return advisorySeverity(facts.advisory);
    case "ssrf":
    case "open-redirect":
    case "csrf":
      return defectClass === "ssrf" ? "high" : "medium";
    case "unhandled-error":
      return "medium";
    case "validation-missing":
      return facts.privileged ? "high" : "medium";
    case "wrong-status":
    case "contract-drift":
      return facts.dataChanged ? "medium" : "low";
    case "undocumented-endpoint":
      return "low";
    default:
      return "medium";
  }
}

export function advisorySeverity(rating: string | undefined): Severity {
  switch ((rating ?? "").toUpperCase()) {
    case "CRITICAL":
      return "critical";
    case "HIGH":
      return "high";
    case "LOW":
      return "low";
    default:
      return "medium";
  }
}

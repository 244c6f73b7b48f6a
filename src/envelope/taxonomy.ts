// The closed vocabulary every finding and every golden ledger shares (spec/golden-ledger.md).

export const DOMAIN_CLASSES = {
  api: ["contract-drift", "unhandled-error", "wrong-status", "validation-missing", "undocumented-endpoint"],
  security: [
    "missing-authentication",
    "missing-authorization",
    "broken-authentication",
    "injection",
    "xss",
    "ssrf",
    "xxe",
    "open-redirect",
    "csrf",
    "insecure-deserialization",
    "secret-exposure",
    "sensitive-data-exposure",
    "vulnerable-dependency",
    "misconfiguration",
  ],
  data: ["missing-constraint", "data-integrity"],
  realtime: ["ws-unauthenticated", "ws-authorization", "ws-ordering", "ws-reconnect", "ws-backpressure"],
  performance: ["n-plus-one", "unbounded-result", "unindexed-query", "slow-endpoint"],
  ui: ["broken-journey", "console-error", "broken-link", "accessibility", "visual-defect"],
  usability: ["undiscoverable-feature", "misleading-copy", "dead-end"],
  architecture: ["circular-dependency", "layering-violation", "god-module", "dead-code"],
} as const;

export type Domain = keyof typeof DOMAIN_CLASSES;
export type DefectClass = (typeof DOMAIN_CLASSES)[Domain][number];

export const DOMAINS = Object.keys(DOMAIN_CLASSES) as Domain[];
export const DEFECT_CLASSES = Object.values(DOMAIN_CLASSES).flat() as DefectClass[];

export const LOCATION_KINDS = ["endpoint", "page", "table", "channel", "file", "dependency"] as const;
export type LocationKind = (typeof LOCATION_KINDS)[number];

export const SEVERITIES = ["critical", "high", "medium", "low"] as const;
export type Severity = (typeof SEVERITIES)[number];

export function domainOfClass(defectClass: string): Domain | undefined {
  return DOMAINS.find((domain) => (DOMAIN_CLASSES[domain] as readonly string[]).includes(defectClass));
}

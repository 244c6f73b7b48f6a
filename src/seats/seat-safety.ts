import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import type { SeatRef } from "../config/agent-schema.ts";
import type { SeatWarning } from "./seat.ts";

// Checks run when a seat is built (SPEC §9). They read only the seat's configuration: no network, no key.
// A refusal says what is wrong and what to do; it never echoes a value that might be a secret.

export interface SeatSafetyReport {
  /** Reasons the seat may not be built; empty when it may. */
  refusals: string[];
  /** Things the user must hear about but that do not stop the seat (printed by the caller). */
  warnings: SeatWarning[];
}

/** Key variables of known model providers: allowed without a notice. */
export const KNOWN_MODEL_KEY_NAMES: readonly string[] = [
  "OPENAI_API_KEY",
  "ANTHROPIC_API_KEY",
  "OPENROUTER_API_KEY",
  "GROQ_API_KEY",
  "MISTRAL_API_KEY",
  "TOGETHER_API_KEY",
  "TOGETHER_AI_API_KEY",
  "DEEPSEEK_API_KEY",
  "FIREWORKS_API_KEY",
  "CEREBRAS_API_KEY",
  "PERPLEXITY_API_KEY",
  "XAI_API_KEY",
  "GEMINI_API_KEY",
  "GOOGLE_GENERATIVE_AI_API_KEY",
  "COHERE_API_KEY",
  "AZURE_OPENAI_API_KEY",
  "DEEPINFRA_API_KEY",
  "NVIDIA_API_KEY",
  "OLLAMA_API_KEY",
  "VLLM_API_KEY",
];

/** A name the user coined for a model key on purpose, e.g. `QAAS_LLM_KEY`. */
const MODEL_KEY_NAME_PATTERN = /(^|_)LLM_(API_)?KEY$/;

/**
 * Parts of a variable name that mark a secret which is not a model key. Sending such a value to a model
 * provider as a bearer key would leak it, so these are refused even when a user asks for them.
 */
export const NON_MODEL_SECRET_MARKERS: readonly string[] = [
  "SECRET",
  "TOKEN",
  "PASSWORD",
  "PASSWD",
  "PASSPHRASE",
  "CREDENTIAL",
  "PRIVATE",
  "SESSION",
  "COOKIE",
  "DATABASE",
  "DB_",
  "_DB",
  "AWS_",
  "SSH",
  "GPG",
  "PGP",
  "JWT",
  "OAUTH",
  "SIGNING",
  "CERT",
  "KUBE",
  "VAULT",
  "GITHUB",
  "GITLAB",
  "NPM_",
  "DOCKER",
  "STRIPE",
  "REDIS",
  "POSTGRES",
  "MYSQL",
  "MONGO",
  "SMTP",
  "DSN",
  "CONNECTION",
];

const ENVIRONMENT_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Judges the NAME of the variable a seat reads its key from. */
export function checkApiKeyName(name: string): { refusal?: string; notice?: string } {
  if (!ENVIRONMENT_NAME_PATTERN.test(name)) {
    // Most often the key itself pasted where its variable's name belongs: say so without repeating it.
    return {
      refusal:
        "api_key_env must be the NAME of an environment variable (letters, digits, underscores), not the key " +
        "itself; put the key in a variable such as OPENAI_API_KEY and write that name here",
    };
  }
  const upper = name.toUpperCase();
  if (KNOWN_MODEL_KEY_NAMES.includes(upper) || MODEL_KEY_NAME_PATTERN.test(upper)) return {};
  const marker = NON_MODEL_SECRET_MARKERS.find((candidate) => upper.includes(candidate));
  if (marker !== undefined) {
    return {
      refusal:
        `api_key_env "${name}" looks like a secret that is not a model key (it contains "${marker}"); qaas ` +
        "would send its value to the model provider. Use the provider's own variable (e.g. OPENAI_API_KEY, " +
        "ANTHROPIC_API_KEY) or a dedicated name ending in _LLM_KEY",
    };
  }
  return {
    notice:
      `api_key_env "${name}" is not a known model-key variable: its value WILL be sent to the model ` +
      "provider as the API key. Make sure it holds only a model key (or rename it to end in _LLM_KEY to " +
      "silence this notice)",
  };
}

type AddressClass = "loopback" | "metadata" | "private" | "link-local" | "reserved";

function subnets(entries: Array<[string, number, "ipv4" | "ipv6"]>): BlockList {
  const list = new BlockList();
  for (const [network, prefix, family] of entries) list.addSubnet(network, prefix, family);
  return list;
}

// BlockList matches IPv4-mapped IPv6 forms (::ffff:10.0.0.1, ::ffff:a00:1) against its IPv4 rules.
const LOOPBACK = subnets([
  ["127.0.0.0", 8, "ipv4"],
  ["::1", 128, "ipv6"],
]);
const METADATA = subnets([
  ["169.254.169.254", 32, "ipv4"], // AWS, GCP, Azure, OpenStack, DigitalOcean…
  ["169.254.170.2", 32, "ipv4"], // AWS ECS task metadata
  ["100.100.100.200", 32, "ipv4"], // Alibaba Cloud
  ["168.63.129.16", 32, "ipv4"], // Azure wire server (a public-looking address)
  ["fd00:ec2::254", 128, "ipv6"], // AWS IMDS over IPv6
]);
const PRIVATE = subnets([
  ["10.0.0.0", 8, "ipv4"],
  ["172.16.0.0", 12, "ipv4"],
  ["192.168.0.0", 16, "ipv4"],
  ["100.64.0.0", 10, "ipv4"], // carrier-grade NAT, also used by VPN meshes
  ["fc00::", 7, "ipv6"],
  ["fec0::", 10, "ipv6"], // deprecated site-local
]);
const LINK_LOCAL = subnets([
  ["169.254.0.0", 16, "ipv4"],
  ["fe80::", 10, "ipv6"],
]);
const RESERVED = subnets([
  ["0.0.0.0", 8, "ipv4"], // "this host": 0.0.0.0 reaches local services
  ["192.0.0.0", 24, "ipv4"],
  ["198.18.0.0", 15, "ipv4"],
  ["224.0.0.0", 4, "ipv4"], // multicast
  ["240.0.0.0", 4, "ipv4"], // reserved and broadcast
  ["::", 128, "ipv6"],
  ["ff00::", 8, "ipv6"],
  // IPv6 forms that embed an IPv4 address other than the mapped ::ffff:0:0/96 one (which BlockList already
  // judges by its IPv4 part): IPv4-compatible, NAT64 and 6to4. Nobody configures a model endpoint this
  // way, and each could smuggle a private address past the IPv4 rules.
  ["::", 96, "ipv6"],
  ["64:ff9b::", 96, "ipv6"],
  ["64:ff9b:1::", 48, "ipv6"],
  ["2002::", 16, "ipv6"],
]);

const LOOPBACK_NAMES = new Set(["localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"]);
const METADATA_NAMES = new Set([
  "metadata.google.internal",
  "metadata.goog",
  "metadata",
  "instance-data",
  "instance-data.ec2.internal",
  "metadata.azure.com",
]);

/** Classifies a host (a hostname or an IP literal, brackets allowed); `undefined` means public. */
export function classifyHost(rawHost: string): AddressClass | undefined {
  const host = rawHost
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
  const family = isIP(host);
  if (family === 0) {
    if (LOOPBACK_NAMES.has(host) || host.endsWith(".localhost")) return "loopback";
    if (METADATA_NAMES.has(host)) return "metadata";
    return undefined;
  }
  const type = family === 4 ? "ipv4" : "ipv6";
  // Order matters: the metadata address sits inside link-local, ::1 inside the IPv4-compatible range.
  if (METADATA.check(host, type)) return "metadata";
  if (LOOPBACK.check(host, type)) return "loopback";
  if (LINK_LOCAL.check(host, type)) return "link-local";
  if (PRIVATE.check(host, type)) return "private";
  if (RESERVED.check(host, type)) return "reserved";
  return undefined;
}

/** Judges a seat's base URL; returns the reason it is refused, or undefined when it is allowed. */
export function checkBaseUrl(baseUrl: string, isLocal: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return `base_url "${baseUrl}" is not a valid URL; write it as http(s)://host[:port]/path`;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return `base_url scheme "${url.protocol}" is not allowed; only http: and https: model endpoints are`;
  }
  if (url.username !== "" || url.password !== "") {
    return "base_url must not embed credentials (user:password@host); put the key in the variable named by api_key_env";
  }
  const addressClass = classifyHost(url.hostname);
  const where = `base_url host "${url.hostname}"`;
  if (isLocal) {
    if (addressClass === "loopback") return undefined;
    return (
      `is_local: true requires a loopback base URL (localhost, 127.0.0.0/8 or ::1), but ${where} is ` +
      `${addressClass === undefined ? "not loopback" : `a ${addressClass} address`}; reach a model on ` +
      "another machine through a tunnel to localhost, or drop is_local for a public endpoint"
    );
  }
  if (addressClass === undefined) return undefined;
  if (addressClass === "loopback") {
    return `${where} is a loopback address; mark the seat is_local: true if you mean a model on this machine`;
  }
  return (
    `${where} is a ${addressClass} address; model seats may call public endpoints, or loopback ones ` +
    "marked is_local: true, but never private, link-local, metadata or reserved addresses"
  );
}

/** Every check for one seat reference. Backends without a network seat (builtin, mock, rules) pass. */
export function checkSeatSafety(ref: SeatRef, defaultBaseUrl?: string): SeatSafetyReport {
  const refusals: string[] = [];
  const warnings: SeatWarning[] = [];
  if (ref.api_key_env !== undefined) {
    const verdict = checkApiKeyName(ref.api_key_env);
    if (verdict.refusal !== undefined) refusals.push(verdict.refusal);
    if (verdict.notice !== undefined)
      warnings.push({ type: "notice", feature: "api_key_env", message: verdict.notice });
  }
  const baseUrl = ref.base_url ?? defaultBaseUrl;
  if (ref.is_local === true && ref.base_url === undefined) {
    refusals.push("is_local: true requires a loopback base_url, and none is set");
  } else if (baseUrl !== undefined) {
    const refusal = checkBaseUrl(baseUrl, ref.is_local === true);
    if (refusal !== undefined) refusals.push(refusal);
  }
  return { refusals, warnings };
}

export type HostLookup = (hostname: string) => Promise<Array<{ address: string }>>;

const systemLookup: HostLookup = (hostname) => lookup(hostname, { all: true, verbatim: true });

/**
 * The call-time half of the base-URL check: a name that passed at build time (say, an attacker's
 * `metadata.example.com`) may resolve to a forbidden address. Resolution failures are left to the request
 * itself, which then fails as a connection error.
 */
export async function checkResolvedHost(
  url: string,
  isLocal: boolean,
  resolve: HostLookup = systemLookup,
): Promise<string | undefined> {
  const hostname = new URL(url).hostname.replace(/^\[|\]$/g, "");
  if (isIP(hostname) !== 0) return undefined;
  let addresses: Array<{ address: string }>;
  try {
    addresses = await resolve(hostname);
  } catch {
    return undefined;
  }
  for (const { address } of addresses) {
    const addressClass = classifyHost(address);
    const allowed = isLocal ? addressClass === "loopback" : addressClass === undefined;
    if (!allowed) {
      return (
        `base_url host "${hostname}" resolves to ${address}, ` +
        `${addressClass === undefined ? "which is not loopback" : `a ${addressClass} address`}; ` +
        (isLocal ? "is_local seats may only reach loopback" : "model seats may not reach it")
      );
    }
  }
  return undefined;
}

import { createHash } from "node:crypto";
import { AwsClient } from "aws4fetch";
import { QaasError } from "../errors.ts";
import type { ArtifactStore } from "./artifact-store.ts";
import { artifactKeySegments, assertRunId } from "./artifacts.ts";

// Artifacts as objects `<prefix><runId>/<name>` of an S3-compatible bucket (AWS, MinIO, R2, Ceph...),
// reached path-style because self-hosted servers rarely have a DNS name per bucket.

export interface S3ArtifactStoreOptions {
  endpoint: string;
  bucket: string;
  region?: string;
  /** A folder of the bucket; a trailing `/` is added when missing. */
  prefix?: string;
  accessKeyId: string;
  secretAccessKey: string;
}

// aws4fetch retries 5xx and 429 ten times by default, with backoff that can stall a run for a minute.
const RETRIES = 3;

export class S3ArtifactStore implements ArtifactStore {
  readonly description: string;
  readonly #client: AwsClient;
  readonly #endpoint: string;
  readonly #bucketUrl: string;
  readonly #prefix: string;

  constructor(options: S3ArtifactStoreOptions) {
    this.#endpoint = endpointWithoutCredentials(options.endpoint);
    this.#bucketUrl = `${this.#endpoint}/${encodeKey(options.bucket)}`;
    this.#prefix =
      options.prefix && !options.prefix.endsWith("/") ? `${options.prefix}/` : (options.prefix ?? "");
    this.description = `s3://${options.bucket}/${this.#prefix} at ${this.#endpoint}`;
    this.#client = new AwsClient({
      accessKeyId: options.accessKeyId,
      secretAccessKey: options.secretAccessKey,
      service: "s3",
      region: options.region ?? "us-east-1",
      retries: RETRIES,
    });
  }

  async put(runId: string, name: string, content: Uint8Array): Promise<void> {
    const key = this.#key(runId, name);
    // Signing the body's hash (rather than UNSIGNED-PAYLOAD) lets the server refuse a corrupted upload.
    const response = await this.#send("PUT", key, `${this.#bucketUrl}/${encodeKey(key)}`, {
      // A copy, because fetch takes only bytes backed by an ArrayBuffer, not a SharedArrayBuffer.
      body: new Uint8Array(content),
      headers: { "x-amz-content-sha256": createHash("sha256").update(content).digest("hex") },
    });
    if (!response.ok) throw await this.#failure("PUT", key, response);
  }

  async get(runId: string, name: string): Promise<Uint8Array | undefined> {
    const key = this.#key(runId, name);
    const response = await this.#send("GET", key, `${this.#bucketUrl}/${encodeKey(key)}`);
    if (response.ok) return new Uint8Array(await response.arrayBuffer());
    const body = await response.text();
    // A missing bucket is a misconfiguration, not a missing artifact.
    if (response.status === 404 && xmlElements(body, "Code")[0] !== "NoSuchBucket") return undefined;
    throw this.#failureFromBody("GET", key, response.status, body);
  }

  async list(runId: string): Promise<string[]> {
    assertRunId(runId);
    const runPrefix = `${this.#prefix}${runId}/`;
    const names: string[] = [];
    let continuationToken: string | undefined;
    do {
      const query = [
        ["list-type", "2"],
        ["prefix", runPrefix],
        ...(continuationToken ? [["continuation-token", continuationToken]] : []),
      ]
        .map(([parameter, value]) => `${parameter}=${encodeURIComponent(value ?? "")}`)
        .join("&");
      const response = await this.#send("GET", runPrefix, `${this.#bucketUrl}?${query}`);
      if (!response.ok) throw await this.#failure("GET (list)", runPrefix, response);
      const xml = await response.text();
      for (const key of xmlElements(xml, "Key")) {
        if (key.startsWith(runPrefix)) names.push(key.slice(runPrefix.length));
      }
      const truncated = xmlElements(xml, "IsTruncated")[0] === "true";
      continuationToken = truncated ? xmlElements(xml, "NextContinuationToken")[0] : undefined;
      if (truncated && !continuationToken) {
        throw new QaasError(
          "ARTIFACT_STORE_FAILED",
          `S3 list of ${runPrefix} in ${this.description} said IsTruncated without a NextContinuationToken`,
        );
      }
    } while (continuationToken);
    return names.sort();
  }

  #key(runId: string, name: string): string {
    return `${this.#prefix}${artifactKeySegments(runId, name).join("/")}`;
  }

  // Hung servers need no timeout of ours: fetch (undici) gives up after 300 s without headers or body bytes.
  async #send(method: string, key: string, url: string, init: RequestInit = {}): Promise<Response> {
    try {
      return await this.#client.fetch(url, { ...init, method });
    } catch (error) {
      const cause = (error as { cause?: NodeJS.ErrnoException }).cause;
      throw new QaasError(
        "ARTIFACT_STORE_UNREACHABLE",
        `cannot reach the S3 endpoint ${this.#endpoint} for ${method} ${key} (${cause?.code ?? cause?.message ?? (error as Error).message}); check that it is up and that the endpoint in the artifact store config is right`,
      );
    }
  }

  async #failure(method: string, key: string, response: Response): Promise<QaasError> {
    return this.#failureFromBody(method, key, response.status, await response.text());
  }

  #failureFromBody(method: string, key: string, status: number, body: string): QaasError {
    const code = xmlElements(body, "Code")[0] ?? "no S3 error code";
    const message = xmlElements(body, "Message")[0];
    return new QaasError(
      "ARTIFACT_STORE_FAILED",
      `S3 ${method} ${key} failed with status ${status}: ${code}${message ? ` (${message})` : ""}; check the bucket, region and credentials of ${this.description}`,
    );
  }
}

/** The endpoint as messages may show it: user and password of a URL like http://key:secret@host dropped. */
function endpointWithoutCredentials(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new QaasError(
      "ARTIFACT_STORE_CONFIG_INVALID",
      `S3 endpoint "${endpoint}" is not a URL (like http://host:9000)`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new QaasError(
      "ARTIFACT_STORE_CONFIG_INVALID",
      `S3 endpoint ${url.origin} must be an http:// or https:// URL`,
    );
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/** Percent-encodes each segment the way SigV4 canonicalises it, so the URL sent is the one signed. */
function encodeKey(key: string): string {
  return key
    .split("/")
    .map((segment) =>
      encodeURIComponent(segment).replace(
        /[!'()*]/g,
        (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`,
      ),
    )
    .join("/");
}

const XML_ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

/** The text of every `<tag>` element; a regex suffices for the flat documents S3 answers with. */
function xmlElements(xml: string, tag: string): string[] {
  return [...xml.matchAll(new RegExp(`<${tag}>([^<]*)</${tag}>`, "g"))].map((match) =>
    unescapeXml(match[1] ?? ""),
  );
}

function unescapeXml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);/g, (_, entity: string) => {
    if (entity.startsWith("#x")) return String.fromCodePoint(Number.parseInt(entity.slice(2), 16));
    if (entity.startsWith("#")) return String.fromCodePoint(Number.parseInt(entity.slice(1), 10));
    return XML_ENTITIES[entity] ?? "";
  });
}

import { createHash, createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

// A minimal S3-compatible server on loopback: path-style create bucket, PUT/GET object and ListObjectsV2,
// every request's AWS Signature V4 recomputed from scratch. s3rver 3.7.1 runs on Node 20 but accepts any
// V4 signature, so a wrong secret could not be told from the right one there.

export interface S3ServerOptions {
  accessKeyId: string;
  secretAccessKey: string;
  region?: string;
  /** Keys per ListObjectsV2 page at most, whatever max-keys asks (S3 itself stops at 1000). */
  pageSize?: number;
}

export interface S3Server {
  endpoint: string;
  /** Objects by bucket, then key: tests read them, or seed what another tool would have written. */
  buckets: Map<string, Map<string, Uint8Array>>;
  /** `METHOD /path?query` of every request, in order. */
  requests: string[];
  close(): Promise<void>;
}

interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

export async function startS3Server(options: S3ServerOptions): Promise<S3Server> {
  const buckets = new Map<string, Map<string, Uint8Array>>();
  const requests: string[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      requests.push(`${request.method} ${request.url}`);
      const reply = handle(request, Buffer.concat(chunks), buckets, options);
      response.writeHead(reply.status, reply.headers).end(reply.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    buckets,
    requests,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function handle(
  request: http.IncomingMessage,
  body: Buffer,
  buckets: Map<string, Map<string, Uint8Array>>,
  options: S3ServerOptions,
): Reply {
  const url = new URL(request.url ?? "/", "http://s3.invalid");
  const refusal = checkSignature(request, url, body, options);
  if (refusal) return refusal;
  const [bucketName = "", ...keySegments] = url.pathname.slice(1).split("/").map(decodeURIComponent);
  const key = keySegments.join("/");
  const bucket = buckets.get(bucketName);
  if (request.method === "PUT" && key === "") {
    if (!bucket) buckets.set(bucketName, new Map());
    return { status: 200 };
  }
  if (!bucket) return s3Error(404, "NoSuchBucket", `The specified bucket ${bucketName} does not exist`);
  if (request.method === "PUT") {
    bucket.set(key, new Uint8Array(body));
    return { status: 200, headers: { ETag: `"${createHash("md5").update(body).digest("hex")}"` } };
  }
  if (request.method === "GET" && key === "" && url.searchParams.get("list-type") === "2") {
    return listObjects(bucket, url.searchParams, options.pageSize ?? 1000);
  }
  if (request.method === "GET") {
    const object = bucket.get(key);
    if (!object) return s3Error(404, "NoSuchKey", "The specified key does not exist.");
    return { status: 200, headers: { "Content-Type": "application/octet-stream" }, body: object };
  }
  return s3Error(405, "MethodNotAllowed", `${request.method} is not implemented here`);
}

function listObjects(bucket: Map<string, Uint8Array>, query: URLSearchParams, serverPageSize: number): Reply {
  const prefix = query.get("prefix") ?? "";
  const pageSize = Math.min(serverPageSize, Number(query.get("max-keys") ?? 1000));
  const token = query.get("continuation-token");
  const after = token ? Buffer.from(token, "base64url").toString() : "";
  const keys = [...bucket.keys()].filter((key) => key.startsWith(prefix) && key > after).sort();
  const page = keys.slice(0, pageSize);
  const truncated = keys.length > page.length;
  const contents = page
    .map((key) => `<Contents><Key>${escapeXml(key)}</Key><Size>${bucket.get(key)?.length}</Size></Contents>`)
    .join("");
  const next = truncated
    ? `<NextContinuationToken>${Buffer.from(page.at(-1) ?? "").toString("base64url")}</NextContinuationToken>`
    : "";
  return xmlReply(
    200,
    `<ListBucketResult><Prefix>${escapeXml(prefix)}</Prefix><KeyCount>${page.length}</KeyCount>` +
      `<MaxKeys>${pageSize}</MaxKeys><IsTruncated>${truncated}</IsTruncated>${next}${contents}</ListBucketResult>`,
  );
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/;

/** Recomputes the request's SigV4 signature; a refusal reply when it does not match, else undefined. */
function checkSignature(
  request: http.IncomingMessage,
  url: URL,
  body: Buffer,
  options: S3ServerOptions,
): Reply | undefined {
  const match = AUTHORIZATION.exec(request.headers.authorization ?? "");
  if (!match) return s3Error(403, "AccessDenied", "An AWS Signature V4 Authorization header is required");
  const [, accessKeyId, date = "", region = "", service = "", signedHeaderList = "", signature] = match;
  if (accessKeyId !== options.accessKeyId) {
    return s3Error(
      403,
      "InvalidAccessKeyId",
      "The AWS Access Key Id you provided does not exist in our records.",
    );
  }
  const header = (name: string) =>
    String(request.headers[name] ?? "")
      .trim()
      .replace(/\s+/g, " ");
  const signedHeaders = signedHeaderList.split(";");
  const amzDate = header("x-amz-date");
  if (!signedHeaders.includes("host") || !signedHeaders.includes("x-amz-date") || !amzDate.startsWith(date)) {
    return s3Error(
      400,
      "AuthorizationHeaderMalformed",
      "host and x-amz-date must be signed, on the credential's date",
    );
  }
  const payloadHash = header("x-amz-content-sha256");
  if (payloadHash !== "UNSIGNED-PAYLOAD" && payloadHash !== sha256Hex(body)) {
    return s3Error(
      400,
      "XAmzContentSHA256Mismatch",
      "The provided x-amz-content-sha256 does not match the body",
    );
  }
  const canonicalRequest = [
    request.method,
    url.pathname
      .split("/")
      .map((segment) => uriEncode(decodeURIComponent(segment)))
      .join("/"),
    [...url.searchParams]
      .map(([name, value]) => [uriEncode(name), uriEncode(value)])
      .sort(([nameA = "", valueA = ""], [nameB = "", valueB = ""]) =>
        nameA === nameB ? compare(valueA, valueB) : compare(nameA, nameB),
      )
      .map(([name, value]) => `${name}=${value}`)
      .join("&"),
    signedHeaders.map((name) => `${name}:${header(name)}\n`).join(""),
    signedHeaderList,
    payloadHash,
  ].join("\n");
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256Hex(canonicalRequest)].join("\n");
  let signingKey = hmac(`AWS4${options.secretAccessKey}`, date);
  for (const part of [region, service, "aws4_request"]) signingKey = hmac(signingKey, part);
  const expected = hmac(signingKey, stringToSign).toString("hex");
  if (region !== (options.region ?? "us-east-1") || service !== "s3" || expected !== signature) {
    return s3Error(
      403,
      "SignatureDoesNotMatch",
      "The request signature we calculated does not match the signature you provided. Check your key and signing method.",
    );
  }
  return undefined;
}

function compare(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

function uriEncode(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

function sha256Hex(content: string | Uint8Array): string {
  return createHash("sha256").update(content).digest("hex");
}

function hmac(key: string | Buffer, text: string): Buffer {
  return createHmac("sha256", key).update(text).digest();
}

function s3Error(status: number, code: string, message: string): Reply {
  return xmlReply(status, `<Error><Code>${code}</Code><Message>${escapeXml(message)}</Message></Error>`);
}

function xmlReply(status: number, xml: string): Reply {
  return {
    status,
    headers: { "Content-Type": "application/xml" },
    body: `<?xml version="1.0" encoding="UTF-8"?>\n${xml}`,
  };
}

function escapeXml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

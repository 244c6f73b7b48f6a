import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openArtifactStore } from "../../src/store/artifact-store.ts";
import { FolderArtifactStore } from "../../src/store/folder-artifact-store.ts";
import { S3ArtifactStore } from "../../src/store/s3-artifact-store.ts";
import { type S3Server, startS3Server } from "../support/s3-server.ts";

const BINARY = new Uint8Array([0, 255, 1, 128, 10, 13, 0]);
const text = (content: string) => new TextEncoder().encode(content);
const escapeRegExp = (fragment: string) => fragment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const failsWith = (code: string, ...fragments: string[]) =>
  expect.objectContaining({ code, message: expect.stringMatching(fragments.map(escapeRegExp).join("[^]*")) });

function folderSetup() {
  const root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "qaas-artifact-store-")), "store");
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-outside-"));
  return { root, outside, store: new FolderArtifactStore(root) };
}

describe("FolderArtifactStore", () => {
  it("round-trips nested names and binary bytes, listing them sorted", async () => {
    const { root, store } = folderSetup();
    await store.put("run-a", "traces/login/trace.zip", BINARY);
    await store.put("run-a", "exchanges/GET-{id}.json", text('{"status":500}'));
    await store.put("run-a", "shot.png", text("png"));
    expect(await store.get("run-a", "traces/login/trace.zip")).toEqual(BINARY);
    expect([...fs.readFileSync(path.join(root, "run-a", "traces", "login", "trace.zip"))]).toEqual([
      ...BINARY,
    ]);
    expect(await store.list("run-a")).toEqual([
      "exchanges/GET-{id}.json",
      "shot.png",
      "traces/login/trace.zip",
    ]);
    expect(store.description).toBe(`folder ${root}`);
  });

  it("lists in sorted order across subfolders (`z/a` after `z-a`, unlike a folder walk)", async () => {
    const { store } = folderSetup();
    const names = ["q.txt", "z/b.txt", "c.txt", "z-a.txt", "a.txt", "z/a.txt", "k.txt"];
    for (const name of names) await store.put("run-a", name, text(name));
    expect(await store.list("run-a")).toEqual([...names].sort());
  });

  it("overwrites an artifact of the same name", async () => {
    const { store } = folderSetup();
    await store.put("run-a", "notes/a.txt", text("first"));
    await store.put("run-a", "notes/a.txt", text("second"));
    expect(new TextDecoder().decode(await store.get("run-a", "notes/a.txt"))).toBe("second");
    expect(await store.list("run-a")).toEqual(["notes/a.txt"]);
  });

  it("answers undefined for an unknown artifact or a folder, and [] for an unknown run", async () => {
    const { store } = folderSetup();
    expect(await store.list("never-seen")).toEqual([]);
    expect(await store.get("never-seen", "a.txt")).toBeUndefined();
    await store.put("run-a", "sub/a.txt", text("a"));
    expect(await store.get("run-a", "b.txt")).toBeUndefined();
    expect(await store.get("run-a", "sub")).toBeUndefined();
  });

  it("lists neither temporary files of an interrupted write nor links", async () => {
    const { root, outside, store } = folderSetup();
    await store.put("run-a", "a.txt", text("a"));
    fs.writeFileSync(path.join(root, "run-a", "b.txt.123.abcd.tmp"), "half");
    fs.symlinkSync(outside, path.join(root, "run-a", "linked"));
    expect(await store.list("run-a")).toEqual(["a.txt"]);
  });

  it("refuses traversal, absolute names and bad run ids with the artifacts.ts codes", async () => {
    const { root, outside, store } = folderSetup();
    for (const name of ["../x", "/abs", "a/../../b", "./x"]) {
      await expect(store.put("run-a", name, text("x")), name).rejects.toThrow(failsWith("ARTIFACT_ESCAPES"));
      await expect(store.get("run-a", name), name).rejects.toThrow(failsWith("ARTIFACT_ESCAPES"));
    }
    for (const name of ["", "a//b", "has space"]) {
      await expect(store.put("run-a", name, text("x")), name).rejects.toThrow(
        failsWith("ARTIFACT_NAME_INVALID"),
      );
    }
    for (const runId of ["..", "../outside", ".hidden", "a/b", ""]) {
      await expect(store.put(runId, "x.txt", text("x")), runId).rejects.toThrow(failsWith("RUN_ID_INVALID"));
      await expect(store.list(runId), runId).rejects.toThrow(failsWith("RUN_ID_INVALID"));
    }
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(fs.existsSync(path.join(root, "..", "x"))).toBe(false);
  });

  it("refuses a run folder linked outside the root, creating nothing beyond it", async () => {
    const { root, outside, store } = folderSetup();
    fs.mkdirSync(root, { recursive: true });
    fs.writeFileSync(path.join(outside, "secret.txt"), "do not read");
    fs.symlinkSync(outside, path.join(root, "run-a"));
    await expect(store.put("run-a", "x.txt", text("x"))).rejects.toThrow(failsWith("ARTIFACT_ESCAPES"));
    await expect(store.put("run-a", "deep/x.txt", text("x"))).rejects.toThrow(failsWith("ARTIFACT_ESCAPES"));
    await expect(store.get("run-a", "secret.txt")).rejects.toThrow(failsWith("ARTIFACT_ESCAPES"));
    await expect(store.list("run-a")).rejects.toThrow(failsWith("ARTIFACT_ESCAPES"));
    expect(fs.readdirSync(outside)).toEqual(["secret.txt"]);
  });

  it("refuses to read an artifact that is a link out of the root", async () => {
    const { root, outside, store } = folderSetup();
    await store.put("run-a", "a.txt", text("a"));
    fs.writeFileSync(path.join(outside, "secret.txt"), "do not read");
    fs.symlinkSync(path.join(outside, "secret.txt"), path.join(root, "run-a", "leak.txt"));
    await expect(store.get("run-a", "leak.txt")).rejects.toThrow(failsWith("ARTIFACT_ESCAPES"));
  });
});

const CREDENTIALS = { accessKeyId: "QAASTESTKEY", secretAccessKey: "qaas-test-secret-key" };

describe("S3ArtifactStore against a signature-checking S3 server", () => {
  let server: S3Server;
  const store = () =>
    new S3ArtifactStore({ endpoint: server.endpoint, bucket: "artifacts", prefix: "qaas", ...CREDENTIALS });

  beforeAll(async () => {
    server = await startS3Server({ ...CREDENTIALS, pageSize: 2 });
    server.buckets.set("artifacts", new Map());
  });
  afterAll(() => server.close());

  it("round-trips nested names and binary bytes under <prefix><runId>/<name>", async () => {
    await store().put("run-a", "traces/login/trace.zip", BINARY);
    await store().put("run-a", "exchanges/GET-{id}+(1).json", text('{"status":500}'));
    expect(await store().get("run-a", "traces/login/trace.zip")).toEqual(BINARY);
    expect(new TextDecoder().decode(await store().get("run-a", "exchanges/GET-{id}+(1).json"))).toBe(
      '{"status":500}',
    );
    const keys = [...(server.buckets.get("artifacts")?.keys() ?? [])].filter((key) =>
      key.startsWith("qaas/run-a/"),
    );
    expect(keys.sort()).toEqual([
      "qaas/run-a/exchanges/GET-{id}+(1).json",
      "qaas/run-a/traces/login/trace.zip",
    ]);
    expect(await store().list("run-a")).toEqual(["exchanges/GET-{id}+(1).json", "traces/login/trace.zip"]);
  });

  it("overwrites an object of the same name", async () => {
    await store().put("run-o", "a.txt", text("first"));
    await store().put("run-o", "a.txt", text("second"));
    expect(new TextDecoder().decode(await store().get("run-o", "a.txt"))).toBe("second");
  });

  it("follows ListObjectsV2 continuation tokens across pages, keeping to the run", async () => {
    for (const name of ["e.txt", "a.txt", "d/1.txt", "c.txt", "b.txt"])
      await store().put("run-p", name, text(name));
    await store().put("run-pa", "other.txt", text("another run"));
    const listsBefore = server.requests.filter((request) => request.includes("list-type=2")).length;
    expect(await store().list("run-p")).toEqual(["a.txt", "b.txt", "c.txt", "d/1.txt", "e.txt"]);
    const lists = server.requests.filter((request) => request.includes("list-type=2")).slice(listsBefore);
    expect(lists).toHaveLength(3);
    expect(lists.filter((request) => request.includes("continuation-token="))).toHaveLength(2);
  });

  it("unescapes XML entities in listed keys written by another tool", async () => {
    server.buckets.get("artifacts")?.set("qaas/run-x/a&b'c\"<d>.txt", text("x"));
    expect(await store().list("run-x")).toEqual(["a&b'c\"<d>.txt"]);
  });

  it("answers undefined for a missing key and [] for an unknown run", async () => {
    expect(await store().get("run-a", "missing.txt")).toBeUndefined();
    expect(await store().list("never-seen")).toEqual([]);
  });

  it("fails with the status and S3 error code, never the secret, when the signature is wrong", async () => {
    const wrong = new S3ArtifactStore({
      ...CREDENTIALS,
      endpoint: server.endpoint,
      bucket: "artifacts",
      secretAccessKey: "wrong-secret",
    });
    const refused = failsWith("ARTIFACT_STORE_FAILED", "PUT run-a/a.txt", "403", "SignatureDoesNotMatch");
    await expect(wrong.put("run-a", "a.txt", text("x"))).rejects.toThrow(refused);
    await expect(wrong.list("run-a")).rejects.toThrow(
      failsWith("ARTIFACT_STORE_FAILED", "403", "SignatureDoesNotMatch"),
    );
    const error = await wrong.get("run-a", "a.txt").catch((caught: Error) => caught);
    expect(error).toEqual(failsWith("ARTIFACT_STORE_FAILED", "GET", "403", "SignatureDoesNotMatch"));
    expect((error as Error).message).not.toContain("wrong-secret");
  });

  it("treats a missing bucket as a failure, not a missing artifact", async () => {
    const noBucket = new S3ArtifactStore({
      ...CREDENTIALS,
      endpoint: server.endpoint,
      bucket: "no-such-bucket",
    });
    await expect(noBucket.get("run-a", "a.txt")).rejects.toThrow(
      failsWith("ARTIFACT_STORE_FAILED", "404", "NoSuchBucket"),
    );
  });

  it("refuses bad run ids and names before sending anything", async () => {
    const requestsBefore = server.requests.length;
    await expect(store().put("run-a", "../x", text("x"))).rejects.toThrow(failsWith("ARTIFACT_ESCAPES"));
    await expect(store().get("run-a", "a//b")).rejects.toThrow(failsWith("ARTIFACT_NAME_INVALID"));
    await expect(store().list("../run-a")).rejects.toThrow(failsWith("RUN_ID_INVALID"));
    expect(server.requests.length).toBe(requestsBefore);
  });

  it("reports an unreachable endpoint by its address, without credentials", async () => {
    const port = await closedPort();
    const unreachable = new S3ArtifactStore({
      ...CREDENTIALS,
      endpoint: `http://user:pw@127.0.0.1:${port}/`,
      bucket: "b",
    });
    expect(unreachable.description).toBe(`s3://b/ at http://127.0.0.1:${port}`);
    const error = await unreachable.put("run-a", "a.txt", text("x")).catch((caught: Error) => caught);
    expect(error).toEqual(
      failsWith("ARTIFACT_STORE_UNREACHABLE", `http://127.0.0.1:${port}`, "ECONNREFUSED"),
    );
    expect((error as Error).message).not.toMatch(/pw|qaas-test-secret-key/);
  });
});

describe("openArtifactStore", () => {
  it("opens the backend the config names, described without secrets", () => {
    const folder = openArtifactStore({ folder: "/srv/qaas-artifacts" });
    expect(folder).toBeInstanceOf(FolderArtifactStore);
    expect(folder.description).toBe("folder /srv/qaas-artifacts");
    const s3 = openArtifactStore({
      s3: { endpoint: "http://minio:9000", bucket: "qa", prefix: "runs/", ...CREDENTIALS },
    });
    expect(s3).toBeInstanceOf(S3ArtifactStore);
    expect(s3.description).toBe("s3://qa/runs/ at http://minio:9000");
  });
});

async function closedPort(): Promise<number> {
  const listener = net.createServer();
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  const { port } = listener.address() as net.AddressInfo;
  await new Promise<void>((resolve) => listener.close(() => resolve()));
  return port;
}

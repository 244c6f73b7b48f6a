import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseArtifactUri, resolveArtifactUri } from "../../src/store/artifacts.ts";
import { RunStore } from "../../src/store/run-store.ts";

function setup() {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-artifacts-"));
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-outside-"));
  fs.writeFileSync(path.join(outside, "secret.txt"), "do not read");
  const store = RunStore.create(home, { runId: "run-a", mode: "nightly", target: "shop" });
  return { home, outside, store };
}

const refused = (code: string) => expect.objectContaining({ code });

describe("artifacts", () => {
  it("puts an artifact (with subfolders) and resolves its URI back to the file", () => {
    const { store } = setup();
    const uri = store.putArtifact("exchanges/GET-{id}.json", '{"status":500}');
    expect(uri).toBe("artifact://run-a/exchanges/GET-{id}.json");
    const file = store.resolveArtifact(uri);
    expect(file).toBe(fs.realpathSync(path.join(store.dir, "artifacts", "exchanges", "GET-{id}.json")));
    expect(fs.readFileSync(file, "utf8")).toBe('{"status":500}');
    store.putArtifact("shot.png", new Uint8Array([1, 2, 3]));
    expect([...fs.readFileSync(store.resolveArtifact("artifact://run-a/shot.png"))]).toEqual([1, 2, 3]);
  });

  it("refuses names that would leave the artifacts folder", () => {
    const { store } = setup();
    for (const name of ["../x", "a/../../x", "/etc/passwd", "a\\..\\x", "./x"]) {
      expect(() => store.putArtifact(name, "x"), name).toThrow(refused("ARTIFACT_ESCAPES"));
    }
    for (const name of ["", "a//b", "a/", "has space", "100%"]) {
      expect(() => store.putArtifact(name, "x"), name).toThrow(refused("ARTIFACT_NAME_INVALID"));
    }
  });

  it("refuses URIs that traverse, are absolute, or encode traversal", () => {
    const { store, home } = setup();
    store.putArtifact("ok.txt", "fine");
    const attempts = [
      "artifact://run-a/../../../etc/passwd",
      "artifact://run-a/../run-a/ok.txt",
      "artifact://run-a//etc/passwd",
      "artifact://run-a/%2e%2e/%2e%2e/ledger.jsonl",
      "artifact://run-a/%2E%2E%2F%2E%2E%2Fledger.jsonl",
      "artifact://run-a/%252e%252e/ledger.jsonl",
      "artifact://../runs/run-a/ok.txt",
      "artifact://%2e%2e/ok.txt",
    ];
    for (const uri of attempts) {
      expect(() => store.resolveArtifact(uri), uri).toThrow(refused("ARTIFACT_ESCAPES"));
      expect(() => resolveArtifactUri(home, uri), uri).toThrow(refused("ARTIFACT_ESCAPES"));
    }
    expect(() => store.resolveArtifact("file:///etc/passwd")).toThrow(refused("ARTIFACT_URI_INVALID"));
    expect(() => store.resolveArtifact("artifact://run-a/missing.txt")).toThrow(
      refused("ARTIFACT_NOT_FOUND"),
    );
  });

  it("refuses a symlink that points outside, and follows one that stays inside", () => {
    const { store, outside } = setup();
    store.putArtifact("real.txt", "inside");
    fs.symlinkSync(path.join(outside, "secret.txt"), path.join(store.artifactsDir, "leak.txt"));
    fs.symlinkSync(outside, path.join(store.artifactsDir, "linked-folder"));
    fs.symlinkSync(path.join(store.artifactsDir, "real.txt"), path.join(store.artifactsDir, "alias.txt"));
    expect(() => store.resolveArtifact("artifact://run-a/leak.txt")).toThrow(refused("ARTIFACT_ESCAPES"));
    expect(() => store.resolveArtifact("artifact://run-a/linked-folder/secret.txt")).toThrow(
      refused("ARTIFACT_ESCAPES"),
    );
    expect(fs.readFileSync(store.resolveArtifact("artifact://run-a/alias.txt"), "utf8")).toBe("inside");
    // Writing through a linked folder would land outside too.
    expect(() => store.putArtifact("linked-folder/planted.txt", "x")).toThrow(refused("ARTIFACT_ESCAPES"));
    expect(fs.existsSync(path.join(outside, "planted.txt"))).toBe(false);
  });

  it("resolves another run's artifact only while it stays inside the store", () => {
    const { store, home, outside } = setup();
    const other = RunStore.create(home, { runId: "run-b", mode: "nightly", target: "shop" });
    const uri = other.putArtifact("trace.zip", "zip");
    expect(fs.readFileSync(store.resolveArtifact(uri), "utf8")).toBe("zip");

    // A run folder that is a link to somewhere else is not part of the store.
    fs.mkdirSync(path.join(outside, "artifacts"));
    fs.writeFileSync(path.join(outside, "artifacts", "x.txt"), "planted");
    fs.writeFileSync(path.join(outside, "ledger.jsonl"), "");
    fs.symlinkSync(outside, path.join(home, "runs", "run-evil"));
    expect(() => store.resolveArtifact("artifact://run-evil/x.txt")).toThrow(refused("ARTIFACT_ESCAPES"));
  });

  it("parses a URI into run and name", () => {
    expect(parseArtifactUri("artifact://run-a/sub/file.json")).toEqual({
      runId: "run-a",
      name: "sub/file.json",
      segments: ["sub", "file.json"],
    });
  });
});

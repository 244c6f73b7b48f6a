import type { SystemConfig } from "../config/system-schema.ts";
import type { RunStore } from "../store/run-store.ts";
import type { SystemMapStore } from "../store/system-map-store.ts";
import type { DefectMemoryPort, LoadedTarget, RunContext } from "../tools/context.ts";

/** The run context every tool of one run closes over, backed by the run store and defect memory. */
export function createRunContext(parts: {
  store: RunStore;
  system: SystemConfig;
  target: LoadedTarget | undefined;
  memory: DefectMemoryPort;
  maps: SystemMapStore;
  signal: AbortSignal;
}): RunContext {
  const { store, target, maps } = parts;
  let pinned = maps.loadPinned(store);
  return {
    runId: store.runId,
    home: store.home,
    system: parts.system,
    target,
    systemMap: () => pinned,
    saveSystemMap(map) {
      const saved = maps.save(map);
      maps.pin(store, map.target, saved.version);
      pinned = map;
      return { version: saved.version };
    },
    record: (kind, data, agent) => store.append(kind, data, agent),
    writeEnvelope: (envelope) => {
      store.writeEnvelope(envelope);
    },
    readEnvelopes: () => store.readEnvelopes(),
    memory: parts.memory,
    putArtifact: (name, content) => store.putArtifact(name, content),
    shared: new Map(),
    signal: parts.signal,
  };
}

import type { PlaybookSession } from "../playbook.ts";
import { definePlaybook } from "../playbook.ts";

// SOCKET without a model: read the channels from the pinned map, run each realtime probe once over all of
// them (plain WebSocket and socket.io alike; the probes add the profile's paths and the socket.io servers
// the source declares), and emit every candidate. The probes confirm before they answer (the owner's socket as control, the
// HTTP API as the judge of who may read what, a second burst for ordering) and hold what they cannot
// confirm below the filing threshold; the playbook adds no judgement of its own.

const PROBES = [
  "ws_probe_auth",
  "ws_probe_authorization",
  "ws_probe_ordering",
  "ws_probe_reconnect",
  "ws_probe_backpressure",
] as const;

function describe(channel: { path: string; protocol?: string; namespaces?: string[] }): string {
  if (channel.protocol !== "socket.io") return channel.path;
  return `${channel.path} (socket.io${channel.namespaces?.length ? ` ${channel.namespaces.join(" ")}` : ""})`;
}

interface ProbeAnswer {
  candidates: unknown[];
  stats?: Record<string, unknown>;
}

export default definePlaybook(async (session: PlaybookSession) => {
  const map = await session.call<{
    channels: Array<{ path: string; protocol?: string; namespaces?: string[] }>;
  }>("get_system_map", {
    section: "channels",
  });
  if (!map.ok) {
    session.log(`SOCKET: no system map (${map.error}); the probes need the map's operations to cause events`);
    return;
  }
  session.log(
    `SOCKET: channels in the map: ${map.data.channels.map(describe).join(", ") || "(none; the profile's websocket.paths and the source are used)"}`,
  );

  for (const probe of PROBES) {
    if (session.signal.aborted) return;
    const answer = await session.call<ProbeAnswer>(probe, {});
    if (!answer.ok) {
      session.log(`SOCKET: ${probe} did not run: ${answer.error}`);
      continue;
    }
    session.log(
      `SOCKET: ${probe}: ${answer.data.candidates.length} candidate(s) ${JSON.stringify(answer.data.stats?.channels ?? [])}`,
    );
    for (const draft of answer.data.candidates) {
      const emitted = await session.call("emit_envelope", draft);
      if (!emitted.ok) session.log(`SOCKET: ${probe}: a candidate was refused: ${emitted.error}`);
    }
  }
});

import type { PlaybookSession } from "../playbook.ts";
import { definePlaybook } from "../playbook.ts";

// SOCKET without a model: read the channels from the pinned map, run each realtime probe once over all of
// them (plain WebSocket and socket.io alike; the probes add the profile's paths and the socket.io servers
// the source declares), and emit every candidate. The probes confirm before they answer (the owner's socket as control, the
// HTTP API as the judge of who may read what, a second burst for ordering) and hold what they cannot
// confirm below the filing threshold; the playbook adds no judgement of its own.

// Most of a probe's time is waiting for frames, so the probes run at once: each judges only frames about
// the records and markers it caused, and the one measurement that needs the run's sockets quiet (who is
// told that a user came online) takes its turn through the run's arrival gate. Two run alone afterwards:
// reconnect expects the server to replay exactly what it missed, which others' events written meanwhile
// could push out of a bounded replay buffer (a miss that is not the server's); backpressure reads the
// target's health during its burst, and others' load would be taken for the cost of its stalled client.
const CONCURRENT = ["ws_probe_auth", "ws_probe_authorization", "ws_probe_ordering"] as const;
const ALONE = ["ws_probe_reconnect", "ws_probe_backpressure"] as const;

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
    session.log(`no system map (${map.error}); the probes need the map's operations to cause events`);
    return;
  }
  session.log(
    `channels in the map: ${map.data.channels.map(describe).join(", ") || "(none; the profile's websocket.paths and the source are used)"}`,
  );

  const run = async (probe: string): Promise<Array<[string, unknown]>> => {
    if (session.signal.aborted) return [];
    const answer = await session.call<ProbeAnswer>(probe, {});
    if (!answer.ok) {
      session.log(`${probe} did not run: ${answer.error}`);
      return [];
    }
    session.log(
      `${probe}: ${answer.data.candidates.length} candidate(s) ${JSON.stringify(answer.data.stats?.channels ?? [])}`,
    );
    return answer.data.candidates.map((draft): [string, unknown] => [probe, draft]);
  };
  const drafts = (await Promise.all(CONCURRENT.map(run))).flat();
  for (const probe of ALONE) drafts.push(...(await run(probe)));
  // Emitted in the probes' order whichever finished first, as when they ran one after another.
  for (const [probe, draft] of drafts) {
    const emitted = await session.call("emit_envelope", draft);
    if (!emitted.ok) session.log(`${probe}: a candidate was refused: ${emitted.error}`);
  }
});

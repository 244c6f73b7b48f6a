import { z } from "zod";
import { probeAuthentication } from "../../probes/realtime/probe-auth.ts";
import { probeAuthorization } from "../../probes/realtime/probe-authorization.ts";
import { probeBackpressure } from "../../probes/realtime/probe-backpressure.ts";
import { probeOrdering } from "../../probes/realtime/probe-ordering.ts";
import { probeReconnect } from "../../probes/realtime/probe-reconnect.ts";
import { fromProbe } from "../result.ts";
import { defineTool } from "../tool.ts";
import { liveActions } from "./live-actions.ts";

// The `ws` server: live realtime probes over plain WebSocket and socket.io. Each connects to the target's
// channels (profile websocket.paths, the map's channels and the socket.io servers its source declares, or
// the one `channel` given), causes events through the API with data of its own, and answers
// `{ candidates: EnvelopeDraft[], stats }` with transcripts stored as artifacts. Every connection is closed
// before the call returns. Writes are skipped on targets that do not allow them.

const common = {
  channel: z
    .string()
    .min(1)
    .max(300)
    .optional()
    .describe(
      "one channel: a WebSocket path (/ws/updates), a socket.io path (/socket.io) or namespace (/chat); default: every known channel",
    ),
  namespace: z
    .string()
    .regex(/^\//)
    .max(200)
    .optional()
    .describe("socket.io only: probe this namespace of the channel (default: every namespace known)"),
  wait_ms: z
    .number()
    .int()
    .min(100)
    .max(5000)
    .optional()
    .describe("how long to wait for a frame after an event (default 700)"),
  max_requests: z.number().int().min(10).max(2000).optional(),
};

const wsProbeAuth = defineTool({
  name: "ws_probe_auth",
  server: "ws",
  description:
    "Connect to each channel with no token, an invalid one and an expired one while a signed-in owner causes an event through the API. Answers ws-unauthenticated candidates when such a socket receives private data (checked against the HTTP API).",
  input: z.strictObject(common),
  actions: liveActions,
  run: async (input, context) => fromProbe(await probeAuthentication(context, input)),
});

const wsProbeAuthorization = defineTool({
  name: "ws_probe_authorization",
  server: "ws",
  description:
    "Connect users of other tenants, peers and lower roles next to an owner who causes events of several kinds (records created under a parent too); answers ws-authorization candidates when someone the HTTP API refuses the record (403/404 on its read, or on the list it appears in) receives its event, or when the owner's own events carry credentials (a password, its hash, an API key) that the API's answers about the same record leave out.",
  input: z.strictObject(common),
  actions: liveActions,
  run: async (input, context) => fromProbe(await probeAuthorization(context, input)),
});

const wsProbeOrdering = defineTool({
  name: "ws_probe_ordering",
  server: "ws",
  description:
    "Cause a bounded burst of events (sequential, then concurrent when frames are numbered) and check one subscriber receives them in order: numbering that goes back or repeats, or changes arriving out of order, is ws-ordering.",
  input: z.strictObject({
    ...common,
    events: z.number().int().min(3).max(20).optional().describe("events per burst (default 12)"),
  }),
  actions: liveActions,
  run: async (input, context) => fromProbe(await probeOrdering(context, input)),
});

const wsProbeReconnect = defineTool({
  name: "ws_probe_reconnect",
  server: "ws",
  description:
    "For channels that advertise resuming (greeting or API document, or resume_param): receive an event, disconnect, cause more, reconnect with the last number; missed events not replayed, or seen ones repeated, is ws-reconnect.",
  input: z.strictObject({
    ...common,
    resume_param: z
      .string()
      .regex(/^[A-Za-z_][\w-]*$/)
      .optional(),
    missed_events: z.number().int().min(1).max(10).optional(),
  }),
  actions: liveActions,
  run: async (input, context) => fromProbe(await probeReconnect(context, input)),
});

const wsProbeBackpressure = defineTool({
  name: "ws_probe_backpressure",
  server: "ws",
  description:
    "A subscriber stops reading during a bounded burst of events next to one that reads; ws-backpressure when the server queues everything for it without dropping it (beyond min_backlog_bytes) or its health endpoint degrades sharply.",
  input: z.strictObject({
    ...common,
    events: z.number().int().min(5).max(60).optional().describe("events in the burst (default 40)"),
    min_backlog_bytes: z
      .number()
      .int()
      .min(1024)
      .max(256 * 1024 * 1024)
      .optional(),
  }),
  actions: liveActions,
  run: async (input, context) => fromProbe(await probeBackpressure(context, input)),
});

export const wsTools = [
  wsProbeAuth,
  wsProbeAuthorization,
  wsProbeOrdering,
  wsProbeReconnect,
  wsProbeBackpressure,
];

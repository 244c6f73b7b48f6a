import type {
  RealtimeAuthenticationKnobs,
  RealtimeAuthorizationKnobs,
} from "../generator/families/realtime-access.ts";
import type {
  RealtimeBackpressureKnobs,
  RealtimeOrderingKnobs,
  RealtimeReconnectKnobs,
} from "../generator/families/realtime-delivery.ts";
import type { RealtimeExposureKnobs } from "../generator/families/realtime-exposure.ts";
import { rowMaker } from "../model/row.ts";
import { NP, NS, PK, PP, PS } from "../model/servers.ts";

// Realtime channels: plain WebSocket (ws on Fastify's upgrade) and socket.io namespaces on the Fastify
// servers, Flask-SocketIO namespaces on the Flask servers (long-polling; see realtime-flask.ts). The
// credential travels in the query, a header on the upgrade, or a first message (socket.io: the handshake's
// auth); on the cookie server, the session cookie of the form sign-in rides on the handshake.

const authn = rowMaker<RealtimeAuthenticationKnobs>("ws-authentication", "high");

export const WS_AUTHENTICATION = [
  authn.v("WSA-01", NS, { protocol: "websocket", placement: "query", flaw: "no-check" }),
  authn.s("WSA-01S", NS, { protocol: "websocket", placement: "query", safeStyle: "enforced" }),
  authn.v("WSA-02", NS, { protocol: "websocket", placement: "header", flaw: "unverified-claims" }),
  authn.s("WSA-02S", NS, { protocol: "websocket", placement: "header", safeStyle: "enforced" }),
  authn.v("WSA-03", NS, { protocol: "websocket", placement: "message", flaw: "any-credential" }),
  authn.s("WSA-03S", NS, { protocol: "websocket", placement: "message", safeStyle: "enforced" }),
  authn.v("WSA-04", NS, { protocol: "socket.io", placement: "message", flaw: "unverified-claims" }),
  authn.s("WSA-04S", NS, { protocol: "socket.io", placement: "message", safeStyle: "public" }),
  authn.v("WSA-05", NP, { protocol: "websocket", placement: "header", flaw: "any-credential" }),
  authn.s("WSA-05S", NP, { protocol: "websocket", placement: "query", safeStyle: "public" }),
  authn.v("WSA-06", NP, { protocol: "socket.io", placement: "query", flaw: "no-check" }),
  authn.s("WSA-06S", NP, { protocol: "socket.io", placement: "message", safeStyle: "enforced" }),
  authn.v("WSA-07", NP, { protocol: "websocket", placement: "message", flaw: "no-check" }),
  authn.v("WSA-08", PP, { protocol: "socket.io", placement: "message", flaw: "unverified-claims" }),
  authn.s("WSA-08S", PP, { protocol: "socket.io", placement: "header", safeStyle: "enforced" }),
  authn.v("WSA-09", PP, { protocol: "socket.io", placement: "query", flaw: "no-check" }),
  authn.v("WSA-10", PK, { protocol: "socket.io", placement: "header", flaw: "any-credential" }),
  authn.s("WSA-10S", PK, { protocol: "socket.io", placement: "query", safeStyle: "public" }),
  authn.s("WSA-11S", PK, { protocol: "socket.io", placement: "message", safeStyle: "enforced" }),
  authn.v("WSA-12", PS, { protocol: "socket.io", placement: "cookie", flaw: "no-check" }),
  authn.s("WSA-12S", PS, { protocol: "socket.io", placement: "cookie", safeStyle: "enforced" }),
  authn.v("WSA-13", PS, { protocol: "socket.io", placement: "cookie", flaw: "any-credential" }),
];

const authz = rowMaker<RealtimeAuthorizationKnobs>("ws-authorization", "high");

export const WS_AUTHORIZATION = [
  authz.v("WSZ-01", NS, { protocol: "websocket", placement: "query" }),
  authz.s("WSZ-01S", NS, { protocol: "websocket", placement: "query" }),
  authz.v("WSZ-02", NS, { protocol: "socket.io", placement: "message" }),
  authz.s("WSZ-02S", NS, { protocol: "socket.io", placement: "header" }),
  authz.v("WSZ-03", NP, { protocol: "websocket", placement: "header" }),
  authz.s("WSZ-03S", NP, { protocol: "socket.io", placement: "message" }),
  authz.v("WSZ-04", NP, { protocol: "socket.io", placement: "query" }),
  authz.v("WSZ-05", PP, { protocol: "socket.io", placement: "message" }),
  authz.s("WSZ-05S", PP, { protocol: "socket.io", placement: "query" }),
  authz.v("WSZ-06", PK, { protocol: "socket.io", placement: "header" }),
  authz.v("WSZ-07", PS, { protocol: "socket.io", placement: "cookie" }),
  authz.s("WSZ-07S", PS, { protocol: "socket.io", placement: "cookie" }),
];

const exposure = rowMaker<RealtimeExposureKnobs>("ws-event-exposure", "high");

export const WS_EVENT_EXPOSURE = [
  exposure.v("WSX-01", NS, { protocol: "websocket", author: "account-row" }),
  exposure.s("WSX-01S", NS, { protocol: "websocket", author: "public-fields" }),
  exposure.v("WSX-02", NP, { protocol: "socket.io", author: "account-row" }),
  exposure.s("WSX-02S", NP, { protocol: "websocket", author: "masked-row" }),
  exposure.v("WSX-03", PP, { protocol: "socket.io", author: "account-row" }),
  exposure.s("WSX-03S", PP, { protocol: "socket.io", author: "public-fields" }),
  exposure.v("WSX-04", PK, { protocol: "socket.io", placement: "header", author: "account-row" }),
  exposure.s("WSX-04S", PK, { protocol: "socket.io", author: "masked-row" }),
  exposure.v("WSX-05", PS, { protocol: "socket.io", placement: "cookie", author: "account-row" }),
];

const ordering = rowMaker<RealtimeOrderingKnobs>("ws-ordering", "medium");

export const WS_ORDERING = [
  ordering.v("WSO-01", NS, { protocol: "websocket", numbering: "seq" }),
  ordering.s("WSO-01S", NS, { protocol: "websocket", numbering: "seq" }),
  ordering.v("WSO-02", NP, { protocol: "websocket", numbering: "none" }),
  ordering.s("WSO-02S", NP, { protocol: "websocket", numbering: "none" }),
  ordering.v("WSO-03", NP, { protocol: "socket.io", numbering: "seq" }),
  ordering.v("WSO-04", PP, { protocol: "socket.io", numbering: "seq" }),
  ordering.s("WSO-04S", PP, { protocol: "socket.io", numbering: "seq" }),
  ordering.v("WSO-05", PK, { protocol: "socket.io", numbering: "none" }),
  ordering.s("WSO-05S", PK, { protocol: "socket.io", numbering: "none" }),
];

const reconnect = rowMaker<RealtimeReconnectKnobs>("ws-reconnect", "low");

export const WS_RECONNECT = [
  reconnect.v("WSR-01", NS, { protocol: "websocket", flaw: "no-replay" }),
  reconnect.s("WSR-01S", NS, { protocol: "websocket" }),
  reconnect.v("WSR-02", NP, { protocol: "websocket", flaw: "replays-seen" }),
  reconnect.s("WSR-02S", NP, { protocol: "websocket" }),
  reconnect.v("WSR-03", PP, { protocol: "socket.io", flaw: "no-replay" }),
  reconnect.s("WSR-03S", PP, { protocol: "socket.io" }),
  reconnect.v("WSR-04", PK, { protocol: "socket.io", flaw: "replays-seen" }),
];

const backpressure = rowMaker<RealtimeBackpressureKnobs>("ws-backpressure", "medium");

export const WS_BACKPRESSURE = [
  backpressure.v("WSB-01", NS, { protocol: "websocket" }),
  backpressure.s("WSB-01S", NP, { protocol: "websocket" }),
];

import type { Row } from "../../model/row.ts";
import { verdict } from "../../oracles/oracle.ts";
import { about, badCredentials, credentialOf, fileRecord, listen } from "../../oracles/socket.ts";
import type { BuildContext, Built } from "../endpoint.ts";
import type { Admission, ChannelKnobs, ChannelSpec } from "./realtime-channel.ts";
import { channelPlace, channelTop, recordOperations } from "./realtime-channel.ts";

// Who may listen. Missing authentication on a channel (CWE-306, CWE-287; OWASP WebSocket Security Cheat
// Sheet, "Authentication"): the handshake is accepted without a credential, with any string, or with a
// JWT whose claims are read but whose signature and expiry are not checked (CWE-347, CWE-613), and the
// channel then streams records the HTTP API keeps to their organisation. Missing authorization (CWE-639,
// CWE-863): a checked channel fans every record out to every signed-in socket, other tenants included.
// Safe look-alikes: the same channel with the check in place (401 on the upgrade, a close, a refused
// socket.io handshake) and delivery scoped to the record's organisation, and a public board documented as
// public whose records anyone may read over HTTP too.

export interface RealtimeAuthenticationKnobs extends ChannelKnobs {
  /** Vulnerable rows: what the handshake fails to check. */
  flaw?: "no-check" | "any-credential" | "unverified-claims";
  /** Safe rows: `enforced` checks the credential; `public` is a documented public board. */
  safeStyle?: "enforced" | "public";
}

export type RealtimeAuthorizationKnobs = ChannelKnobs;

const ADMISSION: Record<NonNullable<RealtimeAuthenticationKnobs["flaw"]>, Admission> = {
  "no-check": "none",
  "any-credential": "any-credential",
  "unverified-claims": "unverified-claims",
};

export function buildRealtimeAuthentication(row: Row<RealtimeAuthenticationKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const place = channelPlace(row, ctx);
  const flaw = row.knobs.flaw ?? "no-check";
  if (flaw === "unverified-claims" && ctx.server.auth !== "bearer") {
    throw new Error(`${row.id}: unverified claims need a server that signs in with JWTs`);
  }
  const publicBoard = !vulnerable && row.knobs.safeStyle === "public";
  // A channel that forgets the check usually broadcasts (there is no identity to scope by); one that reads
  // unverified claims scopes by the identity it was told.
  const spec: ChannelSpec = vulnerable
    ? { admission: ADMISSION[flaw], delivery: flaw === "unverified-claims" ? "same-org" : "everyone" }
    : publicBoard
      ? { admission: "none", delivery: "everyone" }
      : { admission: "verified", delivery: "same-org" };
  const ops = recordOperations(place, ctx, {
    publicRead: publicBoard,
    describe: publicBoard
      ? "Public board: posts are public on purpose, readable by anyone over HTTP and on the channel without credentials."
      : "Records are private to the caller's organisation.",
  });
  const words = {
    "no-check": "without any credential",
    "any-credential": "with any credential string, never looked up",
    "unverified-claims": "with an expired or forged JWT (claims read, signature and expiry unchecked)",
  }[flaw];
  return {
    endpoint: ops.create,
    support: ops.support,
    channel: place.location,
    top: channelTop(place, spec, ctx),
    title: vulnerable
      ? `Channel ${place.channel} accepts connections ${words} and streams private records`
      : publicBoard
        ? `Channel ${place.channel} streams posts without credentials`
        : `Channel ${place.channel} checks the credential of each connection`,
    ...(vulnerable
      ? {}
      : {
          why: publicBoard
            ? "a public board, documented as public: anyone may read its posts over HTTP as well"
            : "the handshake verifies the credential (signature and expiry) and refuses the connection otherwise",
        }),
    oracle: async (client) => {
      const intruders = await Promise.all(
        (await badCredentials(client)).map(async (bad) => ({
          ...bad,
          socket: await listen(client, place, bad.credential),
        })),
      );
      try {
        const { id } = await fileRecord(client, place, { title: "private plan", note: "for the team only" });
        const reached = [];
        for (const intruder of intruders) {
          if (await intruder.socket.waitFor(about(id), 800)) reached.push(intruder.label);
        }
        const anonymousRead = await client.ask({ path: place.item.replace("{id}", String(id)) });
        const privateData = anonymousRead.status === 401 || anonymousRead.status === 404;
        return verdict(
          reached.length > 0 && privateData,
          `reached ${reached.join(", ") || "no intruder"}; anonymous read → ${anonymousRead.status}`,
        );
      } finally {
        for (const intruder of intruders) intruder.socket.close();
      }
    },
  };
}

export function buildRealtimeAuthorization(row: Row<RealtimeAuthorizationKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const place = channelPlace(row, ctx);
  const spec: ChannelSpec = { admission: "verified", delivery: vulnerable ? "everyone" : "same-org" };
  const ops = recordOperations(place, ctx, { describe: "Records are private to the caller's organisation." });
  return {
    endpoint: ops.create,
    support: ops.support,
    channel: place.location,
    top: channelTop(place, spec, ctx),
    title: vulnerable
      ? `Channel ${place.channel} sends every organisation's records to every signed-in connection`
      : `Channel ${place.channel} carries records to signed-in connections`,
    ...(vulnerable ? {} : { why: "each event goes only to connections of the record's organisation" }),
    oracle: async (client) => {
      const outsider = await listen(client, place, await credentialOf(client, "bruno"));
      const owner = await listen(client, place, await credentialOf(client, "alice"));
      try {
        if (!outsider.opened || !owner.opened) throw new Error("a signed-in connection was refused");
        const { id } = await fileRecord(client, place, { title: "org plan", note: "northwind only" });
        if (!(await owner.waitFor(about(id), 1500)))
          throw new Error("the owner's own connection got no event");
        const leaked = await outsider.waitFor(about(id), 800);
        const read = await client.ask({ as: "bruno", path: place.item.replace("{id}", String(id)) });
        return verdict(
          leaked !== undefined && read.status === 404,
          `other org received: ${leaked !== undefined}; its read → ${read.status}`,
        );
      } finally {
        outsider.close();
        owner.close();
      }
    },
  };
}

import type { Row } from "../../model/row.ts";
import { brief, verdict } from "../../oracles/oracle.ts";
import { about, credentialOf, fileRecord, listen } from "../../oracles/socket.ts";
import type { BuildContext, Built } from "../endpoint.ts";
import type { ChannelKnobs, ChannelSpec } from "./realtime-channel.ts";
import { channelPlace, channelTop, recordOperations } from "./realtime-channel.ts";

// What an event carries. Excessive data exposure over a channel (CWE-213, CWE-522; OWASP API3:2023 and the
// WebSocket Security Cheat Sheet): the event is built from the author's whole account row — the ORM object
// or `SELECT *` joined in — so every subscriber receives the password hash (and, where the server issues
// them, the API key) that the HTTP API's answers leave out. Safe look-alikes: the event embeds the
// author's id and name, or the row with its credentials masked the way a serializer's redaction does.

export interface RealtimeExposureKnobs extends ChannelKnobs {
  /** What the event says about its author: the whole row (vulnerable), public fields, or the row masked. */
  author: "account-row" | "public-fields" | "masked-row";
}

/** The author as each knob embeds it, with the created record in `record` and the account row in `user`. */
const EMBED: Record<RealtimeExposureKnobs["author"], { node: string; python: string }> = {
  "account-row": { node: "{ ...record, author: user }", python: "dict(record, author=dict(user))" },
  "public-fields": {
    node: "{ ...record, author: { id: user.id, name: user.name } }",
    python: 'dict(record, author={"id": user["id"], "name": user["name"]})',
  },
  "masked-row": {
    node: '{ ...record, author: { ...user, password_hash: "********", api_key: user.api_key ? "****" + String(user.api_key).slice(-4) : null } }',
    python:
      'dict(record, author=dict(user, password_hash="********", api_key=("****" + str(user["api_key"])[-4:]) if user["api_key"] else None))',
  },
};

export function buildRealtimeExposure(row: Row<RealtimeExposureKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  if (vulnerable !== (row.knobs.author === "account-row")) {
    throw new Error(`${row.id}: only the whole account row is the flaw; safe rows embed less or mask it`);
  }
  const place = channelPlace(row, ctx);
  const spec: ChannelSpec = { admission: "verified", delivery: "same-org" };
  const ops = recordOperations(place, ctx, {
    describe: "Records are private to the caller's organisation; each event names its author.",
    eventRecord: EMBED[row.knobs.author],
  });
  return {
    endpoint: ops.create,
    support: ops.support,
    channel: place.location,
    top: channelTop(place, spec, ctx),
    title: vulnerable
      ? `Channel ${place.channel} embeds the author's account row, password hash included, in every event`
      : `Channel ${place.channel} names each event's author`,
    ...(vulnerable
      ? {}
      : {
          why:
            row.knobs.author === "public-fields"
              ? "the event embeds only the author's id and name"
              : "the author's row is embedded with its password hash and key masked",
        }),
    oracle: async (client) => {
      const owner = await listen(client, place, await credentialOf(client, "alice"));
      try {
        if (!owner.opened) throw new Error("the owner's connection was refused");
        const { created, id } = await fileRecord(client, place, {
          title: "weekly plan",
          note: "draft for the team",
        });
        const event = await owner.waitFor(about(id), 1500);
        if (!event) throw new Error("the owner's own connection got no event");
        const read = await client.ask({ as: "alice", path: place.item.replace("{id}", String(id)) });
        if (read.status !== 200) throw new Error(`read: ${brief(read)}`);
        const hash = /scrypt\$[0-9a-f]+\$[0-9a-f]+/;
        const carried = hash.test(JSON.stringify(event));
        const shown = hash.test(read.text) || hash.test(created.text);
        return verdict(
          carried && !shown,
          `event carries a password hash: ${carried}; the API shows one: ${shown}`,
        );
      } finally {
        owner.close();
      }
    },
  };
}

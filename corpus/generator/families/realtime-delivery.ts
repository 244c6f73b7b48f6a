import type { Row } from "../../model/row.ts";
import { brief, verdict } from "../../oracles/oracle.ts";
import type { Listener } from "../../oracles/socket.ts";
import { about, credentialOf, listen } from "../../oracles/socket.ts";
import type { BuildContext, Built } from "../endpoint.ts";
import type { ChannelKnobs, ChannelPlace, ChannelSpec } from "./realtime-channel.ts";
import { channelPlace, channelTop, recordOperations } from "./realtime-channel.ts";

// How events arrive, for a correctly authenticated and scoped channel:
// - ordering (CWE-362 / CWE-696, incorrect behaviour order): events numbered with a wall-clock second
//   (repeats within a burst), or batched and flushed last-in-first-out (a burst arrives reversed). Safe: a
//   counter per channel, a first-in-first-out flush.
// - reconnect (CWE-1322-style lost updates; OWASP cheat sheet, "resume"): the greeting promises that
//   `?since=<seq>` resumes, yet a reconnect gets nothing, or gets the last seen event again. Safe: exactly
//   the events after `since`, from a bounded history.
// - backpressure (CWE-400, CWE-770): every change carries a ~300 KB snapshot and the channel writes to a
//   connection that stopped reading without limit, buffering all of it. Safe: a connection more than 1 MiB
//   behind is dropped (RFC 6455 lets a server close a client it cannot serve).

export interface RealtimeOrderingKnobs extends ChannelKnobs {
  numbering: "seq" | "none";
}
export type RealtimeReconnectKnobs = ChannelKnobs & { flaw?: "no-replay" | "replays-seen" };
export type RealtimeBackpressureKnobs = ChannelKnobs;

const BURST = 8;

async function openOwner(
  client: Parameters<Built["oracle"]>[0],
  place: ChannelPlace,
  query: Record<string, string> = {},
): Promise<Listener> {
  const owner = await listen(client, place, await credentialOf(client, "alice"), query);
  if (!owner.opened) throw new Error("the owner's connection was refused");
  return owner;
}

async function createOne(
  client: Parameters<Built["oracle"]>[0],
  place: ChannelPlace,
  title: string,
): Promise<unknown> {
  const created = await client.ask({
    as: "alice",
    method: "POST",
    path: place.collection,
    json: { title, note: "burst" },
  });
  if (created.status !== 201) throw new Error(`create: ${brief(created)}`);
  return (created.json as { id: unknown }).id;
}

async function change(
  client: Parameters<Built["oracle"]>[0],
  place: ChannelPlace,
  id: unknown,
  title: string,
): Promise<void> {
  const changed = await client.ask({
    as: "alice",
    method: "PATCH",
    path: place.item.replace("{id}", String(id)),
    json: { title, note: "burst" },
  });
  if (changed.status !== 200) throw new Error(`change: ${brief(changed)}`);
}

function titleOf(message: Record<string, unknown>): string | undefined {
  return (message.record as { title?: string } | undefined)?.title;
}

export function buildRealtimeOrdering(row: Row<RealtimeOrderingKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const place = channelPlace(row, ctx);
  const hub = `hub_${place.id}`;
  const numbered = row.knobs.numbering === "seq";
  const spec: ChannelSpec = numbered
    ? {
        admission: "verified",
        delivery: "same-org",
        stamp: vulnerable
          ? "message.seq = Math.floor(Date.now() / 1000);"
          : `message.seq = ++sequence_${place.id};`,
      }
    : {
        admission: "verified",
        delivery: "same-org",
        // Changes are batched for 150 ms; the flaw takes them off the end of the batch.
        deliver: `const pending_${place.id} = [];
function deliver_${place.id}(message, admit) {
  pending_${place.id}.push({ message, admit });
  if (pending_${place.id}.length > 1) return;
  setTimeout(() => {
    while (pending_${place.id}.length > 0) {
      const next = pending_${place.id}.${vulnerable ? "pop" : "shift"}();
      ${hub}.publish(next.message, next.admit);
    }
  }, 150);
}`,
      };
  const counter = numbered && !vulnerable ? `let sequence_${place.id} = 0;\n` : "";
  const ops = recordOperations(place, ctx, {
    describe: numbered
      ? "Records are private to the caller's organisation; each announcement carries `seq`, increasing by one per event."
      : "Records are private to the caller's organisation; announcements arrive in the order the changes were made.",
  });
  return {
    endpoint: ops.create,
    support: ops.support,
    channel: place.location,
    top: channelTop(
      place,
      spec,
      ctx,
      numbered
        ? {
            stamp: vulnerable
              ? 'message["seq"] = int(time.time())'
              : `with SEQUENCE_LOCK_${place.id}:\n    SEQUENCE_${place.id}[0] += 1\n    message["seq"] = SEQUENCE_${place.id}[0]`,
          }
        : {
            deliver: `PENDING_${place.id} = []


def deliver_${place.id}(message, admit):
    PENDING_${place.id}.append((message, admit))
    if len(PENDING_${place.id}) > 1:
        return

    def flush():
        while PENDING_${place.id}:
            queued, allowed = PENDING_${place.id}.${vulnerable ? "pop()" : "pop(0)"}
            for sid, user in list(SUBSCRIBERS_${place.id}.items()):
                if allowed(user):
                    socketio.emit(${JSON.stringify(place.event)}, queued, to=sid, namespace=${JSON.stringify(place.channel)})

    threading.Timer(0.15, flush).start()`,
          },
      counter,
    ),
    title: vulnerable
      ? numbered
        ? `Channel ${place.channel} numbers events with the wall-clock second: seq repeats within a burst`
        : `Channel ${place.channel} delivers a burst of changes in reverse order`
      : `Channel ${place.channel} ${numbered ? "numbers its events" : "batches its events"}`,
    ...(vulnerable
      ? {}
      : {
          why: numbered
            ? "seq is a counter: it goes up by one per event"
            : "batches are flushed first in, first out",
        }),
    oracle: async (client) => {
      const owner = await openOwner(client, place);
      try {
        const id = await createOne(client, place, "ordered");
        if (!(await owner.waitFor(about(id), 1500))) throw new Error("no event about the record");
        const from = owner.messages.length;
        const titles = Array.from({ length: BURST }, (_, index) => `step-${index + 1}`);
        for (const title of titles) await change(client, place, id, title);
        await owner.waitFor(() => owner.messages.slice(from).filter(about(id)).length >= BURST, 2000, from);
        const seen = owner.messages.slice(from).filter(about(id));
        if (numbered) {
          const numbers = seen.map((message) => Number(message.seq));
          const broken = numbers.some((value, index) => index > 0 && value <= numbers[index - 1]!);
          return verdict(broken, `seq: ${numbers.join(",")}`);
        }
        const order = seen.map(titleOf);
        return verdict(order.join() !== titles.join(), `order: ${order.join(",")}`);
      } finally {
        owner.close();
      }
    },
  };
}

export function buildRealtimeReconnect(row: Row<RealtimeReconnectKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const flaw = row.knobs.flaw ?? "no-replay";
  const place = channelPlace(row, ctx);
  const history = `history_${place.id}`;
  const replay =
    vulnerable && flaw === "no-replay"
      ? ""
      : `if (since !== null && since !== undefined && /^[0-9]{1,12}$/.test(String(since))) {
  for (const entry of ${history}) if (entry.message.seq ${vulnerable ? ">=" : ">"} Number(since) && entry.admit(subscriber)) reply(entry.message);
}`;
  const spec: ChannelSpec = {
    admission: "verified",
    delivery: "same-org",
    stamp: `message.seq = ++sequence_${place.id};`,
    // The last 200 events are kept for clients that resume.
    deliver: `function deliver_${place.id}(message, admit) {
  ${history}.push({ message, admit });
  if (${history}.length > 200) ${history}.shift();
  hub_${place.id}.publish(message, admit);
}`,
    onSubscribe: `reply({ type: "hello", resume: { param: "since" }, seq: sequence_${place.id} });
${replay}`,
  };
  const ops = recordOperations(place, ctx, {
    describe:
      "Records are private to the caller's organisation; announcements carry `seq`, and a client that reconnects with `since=<last seq>` gets what it missed.",
  });
  return {
    endpoint: ops.create,
    support: ops.support,
    channel: place.location,
    top: channelTop(
      place,
      spec,
      ctx,
      {
        stamp: `with SEQUENCE_LOCK_${place.id}:\n    SEQUENCE_${place.id}[0] += 1\n    message["seq"] = SEQUENCE_${place.id}[0]`,
        deliver: `HISTORY_${place.id} = []


def deliver_${place.id}(message, admit):
    HISTORY_${place.id}.append((message, admit))
    del HISTORY_${place.id}[:-200]
    for sid, user in list(SUBSCRIBERS_${place.id}.items()):
        if admit(user):
            socketio.emit(${JSON.stringify(place.event)}, message, to=sid, namespace=${JSON.stringify(place.channel)})`,
        onSubscribe: `reply({"type": "hello", "resume": {"param": "since"}, "seq": SEQUENCE_${place.id}[0]})${
          vulnerable && flaw === "no-replay"
            ? ""
            : `
if since is not None and re.fullmatch(r"[0-9]{1,12}", str(since)):
    for message, admit in list(HISTORY_${place.id}):
        if message["seq"] ${vulnerable ? ">=" : ">"} int(since) and admit(user):
            reply(message)`
        }`,
      },
      `let sequence_${place.id} = 0;\nconst ${history} = [];\n`,
    ),
    title: vulnerable
      ? flaw === "no-replay"
        ? `Channel ${place.channel} promises resume with since= but replays nothing after a reconnect`
        : `Channel ${place.channel} replays the last seen event again on resume`
      : `Channel ${place.channel} resumes from since=`,
    ...(vulnerable ? {} : { why: "a reconnect with since= gets exactly the events after it" }),
    oracle: async (client) => {
      const first = await openOwner(client, place);
      let seen: number;
      let id: unknown;
      try {
        id = await createOne(client, place, "resumable");
        const event = await first.waitFor(about(id), 1500);
        if (!event) throw new Error("no event about the record");
        seen = Number(event.seq);
      } finally {
        first.close();
      }
      const missed = ["missed-1", "missed-2", "missed-3"];
      for (const title of missed) await change(client, place, id, title);
      const again = await openOwner(client, place, { since: String(seen) });
      try {
        await again.waitFor(() => again.messages.filter(about(id)).length >= missed.length, 1500);
        const replayed = again.messages.filter(about(id)).map(titleOf);
        return verdict(
          replayed.join() !== missed.join(),
          `since=${seen} replayed: ${replayed.join(",") || "nothing"}`,
        );
      } finally {
        again.close();
      }
    },
  };
}

export function buildRealtimeBackpressure(row: Row<RealtimeBackpressureKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const place = channelPlace(row, ctx);
  if (place.protocol !== "websocket")
    throw new Error(`${row.id}: backpressure variants are plain WebSocket channels`);
  const spec: ChannelSpec = {
    admission: "verified",
    delivery: "same-org",
    extra: "{ snapshot: realtime.snapshotOf(record) }",
    ...(vulnerable
      ? {}
      : {
          deliver: `function deliver_${place.id}(message, admit) {
  hub_${place.id}.publish(message, (subscriber) => {
    if (!admit(subscriber)) return false;
    // A connection more than 1 MiB behind stopped reading: drop it rather than buffer without end.
    if (subscriber.ws.bufferedAmount > 1048576) {
      subscriber.ws.terminate();
      return false;
    }
    return true;
  });
}`,
        }),
  };
  const ops = recordOperations(place, ctx, {
    describe:
      "Records are private to the caller's organisation; each announcement carries the record's rendered snapshot.",
  });
  return {
    endpoint: ops.create,
    support: ops.support,
    channel: place.location,
    top: channelTop(place, spec, ctx),
    title: vulnerable
      ? `Channel ${place.channel} buffers without limit for a connection that stopped reading`
      : `Channel ${place.channel} sends large snapshots`,
    ...(vulnerable ? {} : { why: "a connection more than 1 MiB behind is dropped instead of buffered" }),
    oracle: async (client) => {
      const slow = await openOwner(client, place);
      try {
        slow.pause(true);
        const total = 36;
        for (let index = 0; index < total; index += 1) await createOne(client, place, `bulk-${index}`);
        await new Promise((resolve) => setTimeout(resolve, 300));
        slow.pause(false);
        await slow.waitFor(
          () => slow.messages.filter((message) => message.type === "created").length >= total,
          4000,
        );
        const received = slow.messages.filter((message) => message.type === "created").length;
        return verdict(
          received >= total && !slow.closed,
          `${received}/${total} events reached the stalled connection; closed: ${slow.closed}`,
        );
      } finally {
        slow.close();
      }
    },
  };
}

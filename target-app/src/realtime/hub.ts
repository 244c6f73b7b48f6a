import { access } from "node:fs/promises";
import path from "node:path";
import { WebSocket } from "ws";
import type { DomainEvent } from "../services/events.ts";

export interface Actor {
  id: number;
  name: string;
  avatar_url: string;
}

export interface OutboundEvent {
  type: string;
  seq: number;
  at: string;
  actor: Actor | null;
  data: Record<string, unknown>;
}

export interface Client {
  id: number;
  socket: WebSocket;
  userId: number;
  tenantId: number;
}

export const HISTORY_SIZE = 200;
const MAX_BUFFERED_BYTES = 1024 * 1024;

export interface HubOptions {
  avatarsDir: string;
  lookupUser: (id: number) => { id: number; name: string } | null;
}

/** Fans domain events out to the sockets of a workspace, numbering them per workspace. */
export class Hub {
  private readonly clients = new Map<number, Client>();
  private readonly sequences = new Map<number, number>();
  private readonly history = new Map<number, OutboundEvent[]>();
  private nextClientId = 1;

  constructor(private readonly options: HubOptions) {}

  add(socket: WebSocket, userId: number, tenantId: number): Client {
    const client: Client = { id: this.nextClientId++, socket, userId, tenantId };
    this.clients.set(client.id, client);
    return client;
  }

  remove(client: Client): void {
    this.clients.delete(client.id);
  }

  lastSeq(tenantId: number): number {
    return this.sequences.get(tenantId) ?? 0;
  }

  /** Re-sends the buffered events of the client's workspace that came after `since`. */
  replay(client: Client, since: number): number {
    const missed = (this.history.get(client.tenantId) ?? []).filter((event) => event.seq > since);
    for (const event of missed) this.send(client, event);
    return missed.length;
  }

  reset(): void {
    this.sequences.clear();
    this.history.clear();
  }

  async publish(event: DomainEvent): Promise<void> {
    const seq = this.lastSeq(event.tenantId) + 1;
    const actor = event.actorId === null ? null : await this.describeActor(event.actorId);
    this.sequences.set(event.tenantId, seq);
    const message: OutboundEvent = {
      type: event.type,
      seq,
      at: new Date().toISOString(),
      actor,
      data: event.data,
    };
    this.remember(event.tenantId, message);
    for (const client of this.recipients(event)) this.send(client, message);
  }

  private recipients(event: DomainEvent): Client[] {
    const all = [...this.clients.values()];
    switch (event.audience ?? "tenant") {
      case "tenant":
        return all.filter((client) => client.tenantId === event.tenantId);
      default:
        return all;
    }
  }

  private remember(tenantId: number, event: OutboundEvent): void {
    const buffer = this.history.get(tenantId) ?? [];
    buffer.push(event);
    if (buffer.length > HISTORY_SIZE) buffer.splice(0, buffer.length - HISTORY_SIZE);
    this.history.set(tenantId, buffer);
  }

  private send(client: Client, event: OutboundEvent): void {
    const socket = client.socket;
    if (socket.readyState !== WebSocket.OPEN) return;
    if (socket.bufferedAmount > MAX_BUFFERED_BYTES) {
      socket.close(1013, "client too slow");
      return;
    }
    socket.send(JSON.stringify(event));
  }

  private async describeActor(userId: number): Promise<Actor | null> {
    const user = this.options.lookupUser(userId);
    if (!user) return null;
    const custom = path.join(this.options.avatarsDir, `${user.id}.png`);
    const hasCustom = await access(custom).then(
      () => true,
      () => false,
    );
    return {
      id: user.id,
      name: user.name,
      avatar_url: hasCustom ? `/avatars/${user.id}.png` : "/static/avatar.svg",
    };
  }
}

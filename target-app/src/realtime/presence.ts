import { WebSocket } from "ws";

export interface OnlineUser {
  id: number;
  name: string;
  tenant_id: number;
  since: string;
}

interface Watcher {
  socket: WebSocket;
  tenantId: number | null;
  seq: number;
}

/** Who is online right now, for the avatars in the page header. */
export class Presence {
  private readonly online = new Map<number, OnlineUser & { connections: number }>();
  private readonly watchers = new Set<Watcher>();

  watch(socket: WebSocket, tenantId: number | null): void {
    const watcher: Watcher = { socket, tenantId, seq: 0 };
    this.watchers.add(watcher);
    socket.on("close", () => this.watchers.delete(watcher));
    this.send(watcher, { type: "presence.snapshot", users: this.visibleTo(watcher) });
  }

  join(user: { id: number; name: string; tenantId: number }): void {
    const current = this.online.get(user.id);
    if (current) {
      current.connections++;
      return;
    }
    const entry = { id: user.id, name: user.name, tenant_id: user.tenantId, since: new Date().toISOString() };
    this.online.set(user.id, { ...entry, connections: 1 });
    this.broadcast(user.tenantId, { type: "presence.join", user: entry });
  }

  leave(user: { id: number; tenantId: number }): void {
    const current = this.online.get(user.id);
    if (!current) return;
    current.connections--;
    if (current.connections > 0) return;
    this.online.delete(user.id);
    this.broadcast(user.tenantId, {
      type: "presence.leave",
      user: { id: user.id, tenant_id: user.tenantId },
    });
  }

  private visibleTo(watcher: Watcher): OnlineUser[] {
    return [...this.online.values()]
      .filter((user) => watcher.tenantId === null || user.tenant_id === watcher.tenantId)
      .map(({ connections: _connections, ...user }) => user);
  }

  private broadcast(tenantId: number, message: Record<string, unknown>): void {
    for (const watcher of this.watchers) {
      if (watcher.tenantId === null || watcher.tenantId === tenantId) this.send(watcher, message);
    }
  }

  private send(watcher: Watcher, message: Record<string, unknown>): void {
    if (watcher.socket.readyState !== WebSocket.OPEN) return;
    watcher.seq++;
    watcher.socket.send(JSON.stringify({ ...message, seq: watcher.seq, at: new Date().toISOString() }));
  }
}

export type Audience = "tenant" | "watchers";

export interface DomainEvent {
  tenantId: number;
  type: string;
  actorId: number | null;
  data: Record<string, unknown>;
  audience?: Audience;
}

type Listener = (event: DomainEvent) => void;

export class EventBus {
  private readonly listeners = new Set<Listener>();

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: DomainEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}

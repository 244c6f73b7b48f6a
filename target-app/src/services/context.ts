import type { AppConfig } from "../config.ts";
import type { Db } from "../db/connection.ts";
import type { EventBus } from "./events.ts";

export interface ServiceContext {
  db: Db;
  config: AppConfig;
  events: EventBus;
  /** Failed sign-in attempts per `email|ip`, as timestamps in ms. */
  loginFailures: Map<string, number[]>;
}

export type Role = "member" | "admin" | "platform_admin";

export interface SessionUser {
  id: number;
  tenantId: number;
  email: string;
  name: string;
  role: Role;
  tokenId: string;
  expiresAt: number;
}

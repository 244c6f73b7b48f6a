import { randomBytes } from "node:crypto";
import { isConstraintError } from "../db/connection.ts";
import type { ServiceContext, SessionUser } from "./context.ts";
import { conflict, notFound } from "./errors.ts";
import { hashPassword } from "./passwords.ts";

export interface UserRow {
  id: number;
  tenant_id: number;
  email: string;
  name: string;
  role: string;
  password_hash: string;
  active: number;
  created_at: string;
}

export interface UserDto {
  id: number;
  tenant_id: number;
  email: string;
  name: string;
  role: string;
  active: boolean;
  created_at: string;
}

export function toUserDto(row: UserRow): UserDto {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    email: row.email,
    name: row.name,
    role: row.role,
    active: row.active === 1,
    created_at: row.created_at,
  };
}

export function findUserByEmail(ctx: ServiceContext, email: string): UserRow | undefined {
  return ctx.db.prepare("SELECT * FROM users WHERE email = ?").get(email.trim().toLowerCase()) as
    | UserRow
    | undefined;
}

export function getUserById(ctx: ServiceContext, id: number): UserRow | undefined {
  return ctx.db.prepare("SELECT * FROM users WHERE id = ?").get(id) as UserRow | undefined;
}

/** A colleague's profile, as shown on task pages. */
export function getColleague(ctx: ServiceContext, user: SessionUser, id: number) {
  const row = ctx.db.prepare("SELECT * FROM users WHERE id = ? AND tenant_id = ?").get(id, user.tenantId) as
    | UserRow
    | undefined;
  if (!row) throw notFound("User");
  return { ...row, active: row.active === 1 };
}

export function listUsers(ctx: ServiceContext, tenantId: number): UserDto[] {
  const rows = ctx.db
    .prepare("SELECT * FROM users WHERE tenant_id = ? ORDER BY name")
    .all(tenantId) as UserRow[];
  return rows.map(toUserDto);
}

export function createUser(
  ctx: ServiceContext,
  tenantId: number,
  input: { email: string; name: string; role: string; password: string },
): UserDto {
  try {
    const info = ctx.db
      .prepare(
        "INSERT INTO users (tenant_id, email, name, role, password_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)",
      )
      .run(
        tenantId,
        input.email.toLowerCase(),
        input.name,
        input.role,
        hashPassword(input.password, randomBytes(16)),
        new Date().toISOString(),
      );
    return toUserDto(getUserById(ctx, Number(info.lastInsertRowid))!);
  } catch (error) {
    if (isConstraintError(error, "SQLITE_CONSTRAINT_UNIQUE"))
      throw conflict("A user with this email already exists");
    throw error;
  }
}

export function updateUser(
  ctx: ServiceContext,
  tenantId: number,
  id: number,
  input: { name?: string | undefined; role?: string | undefined; active?: boolean | undefined },
): UserDto {
  const row = ctx.db.prepare("SELECT * FROM users WHERE id = ? AND tenant_id = ?").get(id, tenantId) as
    | UserRow
    | undefined;
  if (!row) throw notFound("User");
  ctx.db
    .prepare("UPDATE users SET name = ?, role = ?, active = ? WHERE id = ?")
    .run(
      input.name ?? row.name,
      input.role ?? row.role,
      input.active === undefined ? row.active : input.active ? 1 : 0,
      id,
    );
  return toUserDto(getUserById(ctx, id)!);
}

import { appendFile } from "node:fs/promises";
import type { ServiceContext, SessionUser } from "./context.ts";

/** Appends one line to the audit trail kept next to the database. */
export async function recordAudit(
  ctx: ServiceContext,
  actor: SessionUser,
  action: string,
  subject: string,
): Promise<void> {
  const line = JSON.stringify({
    at: new Date().toISOString(),
    tenant: actor.tenantId,
    actor: actor.id,
    action,
    subject,
  });
  await appendFile(ctx.config.auditLogFile, `${line}\n`);
}

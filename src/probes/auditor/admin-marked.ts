import type { Operation, SystemMap } from "../../map/system-map.ts";
import { rawOperation } from "../api/operation-index.ts";
import { toTemplateForm } from "../http/target-url.ts";

const ADMIN_SEGMENT =
  /^(admin|admins|administration|administrator|internal|manage|management|staff|backoffice|back-office|superuser|superadmin|sudo|ops|moderation|platform)$/i;
/**
 * Area words that are also nouns for people: `/staff/reports` is a staff area, but `/teams/staff` (or
 * `/teams/staff/{id}`) is the collection of staff members, which every member of a company may commonly list.
 */
const PEOPLE_NOUN = /^staff$/i;
/** Stricter than path segments: ids name resources too (`listStaff`), so only unambiguous words count. */
const ADMIN_WORD = /^(admin|admins|administration|administrator|superuser|superadmin|backoffice|platform)$/i;
const ADMIN_TEXT =
  /\b(admin(istrator)?s?[- ]only|only (for )?admin(istrator)?s|requires? (an? )?(admin|administrator|staff|superuser)( role)?|admin(istrator)? role|restricted to (admin|staff))/i;
const ADMIN_SCOPE = /admin|superuser|staff|manage|write:all|root/i;

/**
 * Whether the operation is meant for privileged users only: an admin-like path segment, an admin tag or
 * description, an admin scope in its security requirement, or an `x-roles`-style extension naming one.
 */
export function isAdminMarked(map: SystemMap, operation: Operation): boolean {
  if (operation.security === "public") return false;
  const segments = toTemplateForm(operation.path).split("/").filter(Boolean);
  if (
    segments.some(
      (segment, index) =>
        ADMIN_SEGMENT.test(segment) && !(PEOPLE_NOUN.test(segment) && isLastStatic(segments, index)),
    )
  )
    return true;
  if (operation.tags?.some((tag) => ADMIN_SEGMENT.test(tag))) return true;
  // `adminListUsers`, `manage_members`: an admin word among the operation id's words.
  if (
    operation.operation_id
      ?.replace(/([a-z0-9])([A-Z])/g, "$1 $2")
      .split(/[\s_.-]+/)
      .some((word) => ADMIN_WORD.test(word))
  )
    return true;
  if (operation.summary && ADMIN_TEXT.test(operation.summary)) return true;
  const raw = rawOperation(map, operation);
  if (!raw) return false;
  if (typeof raw.description === "string" && ADMIN_TEXT.test(raw.description)) return true;
  const security = Array.isArray(raw.security) ? raw.security : [];
  for (const requirement of security) {
    if (
      requirement &&
      typeof requirement === "object" &&
      Object.values(requirement).some(
        (scopes) => Array.isArray(scopes) && scopes.some((scope) => ADMIN_SCOPE.test(String(scope))),
      )
    )
      return true;
  }
  for (const [key, value] of Object.entries(raw)) {
    if (
      /^x-(roles?|required-roles?|permissions?|access)$/i.test(key) &&
      ADMIN_SCOPE.test(JSON.stringify(value))
    )
      return true;
  }
  return false;
}

/** The last static segment, nested under a resource (`/shifts/staff`), not an area at the root (`/staff`). */
function isLastStatic(segments: readonly string[], index: number): boolean {
  const parent = segments
    .slice(0, index)
    .filter((segment) => !segment.startsWith("{") && !API_PREFIX.test(segment))
    .at(-1);
  return parent !== undefined && segments.slice(index + 1).every((segment) => segment.startsWith("{"));
}

const API_PREFIX = /^(api|rest|app|v\d+(\.\d+)?)$/i;

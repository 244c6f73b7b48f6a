import type { ProfileUser } from "./sign-in.ts";

// "Lower role" without a role model: profiles name roles freely, so rank them by what the name usually
// means. Highest first: superuser/root/owner/platform or global admin (100, may cross tenants), admin (90), manager/moderator/staff/editor (50),
// unknown names (30), member/user/customer (20), viewer/reader/guest (10). A user without an admin-like
// role is "lower" than one with it; two users of one rank are peers.

const RANKS: ReadonlyArray<{ pattern: RegExp; rank: number }> = [
  { pattern: /super|root|owner|sysadmin|system|platform|global|site[-_ ]?admin|instance/i, rank: 100 },
  { pattern: /admin|administrator/i, rank: 90 },
  { pattern: /manager|moderator|staff|editor|maintainer|operator|support|lead|supervisor/i, rank: 50 },
  {
    pattern: /member|user|customer|client|employee|author|contributor|seller|buyer|patient|student/i,
    rank: 20,
  },
  { pattern: /viewer|reader|guest|readonly|read-only|read_only|visitor|anonymous|basic|free/i, rank: 10 },
];

export function roleRank(role: string): number {
  return RANKS.find((entry) => entry.pattern.test(role))?.rank ?? 30;
}

export function isAdminLike(role: string): boolean {
  return roleRank(role) >= 90;
}

/** Users ordered from least to most privileged (stable by name within a rank). */
export function byPrivilege(users: readonly ProfileUser[]): ProfileUser[] {
  return [...users].sort((a, b) => roleRank(a.role) - roleRank(b.role) || a.name.localeCompare(b.name));
}

export type Relation = "same-role" | "other-tenant" | "lower-role";

/**
 * The users who should NOT see what `owner` owns, with why: a peer of the same role (and tenant), anyone in
 * another tenant, and a lower role in the same tenant. Higher roles of the same tenant (and tenant-less
 * admins) may legitimately see it and are left out.
 */
export function outsidersOf(
  owner: ProfileUser,
  users: readonly ProfileUser[],
): Array<{ user: ProfileUser; relation: Relation }> {
  const ownerRank = roleRank(owner.role);
  const result: Array<{ user: ProfileUser; relation: Relation }> = [];
  for (const user of users) {
    if (user.name === owner.name) continue;
    const rank = roleRank(user.role);
    if (owner.tenant !== undefined && user.tenant !== undefined && user.tenant !== owner.tenant) {
      if (rank < 100) result.push({ user, relation: "other-tenant" });
      continue;
    }
    if (rank < ownerRank) result.push({ user, relation: "lower-role" });
    else if (rank === ownerRank && user.role.toLowerCase() === owner.role.toLowerCase()) {
      result.push({ user, relation: "same-role" });
    }
  }
  return result;
}

import { familyOfParameter } from "../api/operation-index.ts";
import type { ResourceFactory } from "../api/resource-factory.ts";
import { pathParameterNames } from "../http/target-url.ts";
import type { ObjectSlot } from "./access-slots.ts";

// Nested resources are checked twice (OWASP API1 on `/orgs/{o}/invoices/{i}`): with the owner's whole
// path, which catches a parent the server never compares with the caller; and with the caller's OWN parent
// and the owner's object id, which catches a child the server never compares with its parent (the caller
// is a member of the org in the path, the invoice belongs to another org).

/**
 * The path values the slot's operation needs with `user`'s own parents in place of the owner's: a parent
 * `user` lists or can make, else the one its own sign-in or "me" answer names. Undefined when the
 * operation has no parent or `user` has none of their own to put there.
 */
export async function ownParentValues(
  factory: ResourceFactory,
  slot: ObjectSlot,
  ownerValues: Record<string, string>,
  user: string,
): Promise<Record<string, string> | undefined> {
  const parents = pathParameterNames(slot.operation.path).filter(
    (name) => name !== slot.name || slot.place !== "path",
  );
  if (parents.length === 0) return undefined;
  const values: Record<string, string> = { ...ownerValues };
  for (const parameter of parents) {
    const family = familyOfParameter(factory.families, slot.operation.path, parameter);
    let own: string | undefined;
    if (family?.idParameter) {
      const listed = await factory.discover(family, user);
      own = listed?.ids[0];
      if (own === undefined && factory.canCreate(family)) own = (await factory.ensure(family, user))?.id;
    } else {
      own = await factory.harvest.selfReference(user, parameter);
    }
    if (own === undefined) return undefined;
    values[parameter] = own;
  }
  return parents.some((parameter) => values[parameter] !== ownerValues[parameter]) ? values : undefined;
}

import type { Operation } from "../../map/system-map.ts";
import type { CreatedResource } from "../api/resource-factory.ts";
import { credentialOperations } from "../auth/credential-operations.ts";
import type { RunAccount } from "../auth/run-accounts.ts";
import { accountKey, accountMakers, accountParameter, registerAccount } from "../auth/run-accounts.ts";
import { pathParameterNames } from "../http/target-url.ts";
import type { LoadRun } from "./load-run.ts";

// Where a load probe may send a request: reads anywhere a user reaches, but a write (an update of an
// item) only to what the run made itself, a record it creates for the purpose, or, where the path names
// an account (`/users/{name}/email`), an account it registered through the application's own sign-up. A
// seeded record or account is never written to.

/** Who sends a probe's requests: a profile user, or an account the run registered. */
export interface Caller {
  user: string | undefined;
  account?: RunAccount;
}

export interface Addressed {
  caller: Caller;
  /** Values for the operation's path parameters (none when it has none). */
  values: Record<string, string>;
  /** The record the probe created for the request, which a generated test creates too. */
  resource?: CreatedResource;
}

/** Where `operation` is sent as the run's first user, or why it is not sent at all. */
export async function addressFor(
  load: LoadRun,
  operation: Operation,
  options: { update: boolean },
): Promise<Addressed | string> {
  const user = load.users[0];
  const located = await load.factory
    .pathValuesFor(operation, user, { fresh: options.update })
    .catch(() => undefined);
  if (!options.update) {
    if (!located && pathParameterNames(operation.path).length > 0) return "no path values";
    return {
      caller: { user },
      values: located?.values ?? {},
      ...(located?.resource ? { resource: located.resource } : {}),
    };
  }
  if (located?.resource) return { caller: { user }, values: located.values, resource: located.resource };
  const parameter = accountParameter(operation.path);
  if (!parameter) return "left alone: no record of the probe's own to change";
  const account = await runAccountOf(load);
  if (typeof account === "string") return `left alone: ${account}`;
  const key = accountKey(account, parameter);
  if (key === undefined) return "left alone: the run's own account has no id to put in the path";
  return { caller: { user: undefined, account }, values: { [parameter]: key } };
}

const accounts = new WeakMap<LoadRun, Promise<RunAccount | string>>();

/** One account per load run, registered on first use. */
function runAccountOf(load: LoadRun): Promise<RunAccount | string> {
  let pending = accounts.get(load);
  if (!pending) {
    const makers = accountMakers(load.run, credentialOperations(load.run.map, load.run.target.profile));
    pending =
      typeof makers === "string"
        ? Promise.resolve(makers)
        : registerAccount(load.run, makers.registration, makers.signIn).then(
            (account) => account ?? "the run could not register and sign in an account of its own",
          );
    accounts.set(load, pending);
  }
  return pending;
}

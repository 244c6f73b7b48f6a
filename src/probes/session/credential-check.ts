import type { SystemMap } from "../../map/system-map.ts";
import { isAuthOperation } from "../api/operation-index.ts";
import type { HttpClient } from "../http/http-client.ts";
import { signOutReason } from "../http/sign-out.ts";
import { joinUrl, pathParameterNames } from "../http/target-url.ts";
import type { SessionPool } from "./session-pool.ts";

// A user who signs in and is still refused as if anonymous: the recipe obtained a credential and puts it
// where the application does not read it (a wrong `auth.apply_as`, a token taken from the wrong field).
// Every probe would then run as a stranger without saying so. One read the document protects tells: the
// same 401 without a credential and with the user's is the profile's mistake, not the application's.

/** Why `user`'s credential looks unused by the application, or undefined when nothing says so. */
export async function unusedCredential(
  client: HttpClient,
  sessions: SessionPool,
  map: SystemMap | undefined,
  baseUrl: string,
  user: string,
  applyAs: string | undefined,
): Promise<string | undefined> {
  const operation = map?.operations.find(
    (candidate) =>
      candidate.method.toUpperCase() === "GET" &&
      candidate.security === "required" &&
      !candidate.graphql &&
      pathParameterNames(candidate.path).length === 0 &&
      !isAuthOperation(candidate) &&
      !signOutReason("GET", candidate.path),
  );
  if (!operation) return undefined;
  const url = joinUrl(baseUrl, operation.path);
  const anonymous = await client.send({ method: "GET", url }).catch(() => undefined);
  if (anonymous?.response?.status !== 401) return undefined;
  const signedIn = await client
    .send(await sessions.prepare(client, user, { method: "GET", url }), { user })
    .catch(() => undefined);
  if (signedIn?.response?.status !== 401) return undefined;
  return (
    `signed in, but GET ${operation.path} answers 401 to ${user} just as it does without a credential: ` +
    `the application does not read the credential where the profile puts it (auth.apply_as ${applyAs ?? "header:Authorization"}; check it and auth.token_from)`
  );
}

import { joinUrl } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send } from "../session/probe-run.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import type { AnswerShape } from "./answer-shape.ts";
import { sameShape, shapeOf } from "./answer-shape.ts";
import type { Attempt } from "./credential-attempt.ts";
import { attempt, identityOf, rightPassword, unknownIdentity, wrongPassword } from "./credential-attempt.ts";
import type { CredentialOperation } from "./credential-operations.ts";

// A body type a route scanner inferred is a guess: a handler reading `request.form` and one reading JSON
// look alike from outside. Before judging a credential operation the map did not get from a document or a
// form, the encoding is settled by what the application visibly reads. A sign-in reads an encoding when a
// profile user's right password is let in where a name nobody has is not; a reset request, when naming an
// account answers differently from naming none. The inferred encoding is tried first and kept unless the
// other one is read and it is not.

const ENCODINGS = ["json", "form"] as const;
type Encoding = (typeof ENCODINGS)[number];

export async function settleEncoding(
  run: ProbeRun,
  entry: CredentialOperation,
  users: readonly ProfileUser[],
): Promise<CredentialOperation> {
  // A GraphQL field travels only as a JSON document; the others' encoding is what was seen or documented.
  if (entry.operation.form || entry.operation.documented || entry.operation.graphql || entry.encoding)
    return entry;
  if (entry.role !== "sign-in" && entry.role !== "reset-request") return entry;
  const inferred: Encoding = /x-www-form-urlencoded|multipart/i.test(
    entry.operation.request_body?.content_type ?? "",
  )
    ? "form"
    : "json";
  const order = [inferred, ...ENCODINGS.filter((encoding) => encoding !== inferred)];
  for (const encoding of order) {
    const candidate = { ...entry, encoding };
    const read =
      entry.role === "sign-in"
        ? await signInReads(run, candidate, users)
        : await resetReads(run, candidate, users);
    if (read === undefined) return entry;
    if (read) {
      if (encoding !== inferred)
        run.notes.push(
          `${entry.operation.method} ${entry.operation.path} reads its fields as ${encoding}, not as the map inferred`,
        );
      return candidate;
    }
  }
  return entry;
}

/** Whether the right password is let in where an unknown name is not; undefined when nobody can tell. */
async function signInReads(
  run: ProbeRun,
  entry: CredentialOperation,
  users: readonly ProfileUser[],
): Promise<boolean | undefined> {
  const user = users.find((candidate) => candidate.password && identityOf(entry, candidate) !== undefined);
  if (!user) return undefined;
  const right = await rightPassword(run, entry, user);
  const wrong = await attempt(run, entry, {
    identity: unknownIdentity(identityOf(entry, user), entry.identityIsEmail),
    password: wrongPassword(),
  });
  if (!right || !wrong) return undefined;
  const status = right.exchange.response?.status ?? 0;
  return status > 0 && status < 400 && !sameShape(shape(right), shape(wrong));
}

/** Whether naming an account changes the answer compared with naming none. */
async function resetReads(
  run: ProbeRun,
  entry: CredentialOperation,
  users: readonly ProfileUser[],
): Promise<boolean | undefined> {
  const identity = users.map((user) => identityOf(entry, user)).find((name) => name !== undefined);
  if (!identity) return undefined;
  const named = await attempt(run, entry, { identity });
  const none = await send(run, undefined, {
    method: "POST",
    url: joinUrl(run.target.baseUrl, entry.operation.path),
    headers: {
      "content-type": entry.encoding === "form" ? "application/x-www-form-urlencoded" : "application/json",
      accept: "application/json, text/html;q=0.9, */*;q=0.8",
    },
    body: entry.encoding === "form" ? "" : "{}",
  });
  if (!named?.exchange.response || !none?.response) return undefined;
  if ((named.exchange.response.status ?? 0) >= 500) return false;
  return !sameShape(shape(named), shapeOf(none, []));
}

function shape(item: Attempt): AnswerShape {
  const { identity, password } = item.values;
  return shapeOf(item.exchange, [identity, ...(password ? [password] : [])]);
}

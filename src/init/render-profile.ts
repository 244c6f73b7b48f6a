import { Document, isMap, isScalar, type Pair } from "yaml";
import type { ProfileGuess } from "./guess-profile.ts";

// The profile as YAML a person can check line by line: a header saying what was guessed and from where,
// what was not found, and a comment over each section that still needs a person.

export function renderProfile(guess: ProfileGuess, repository: string): string {
  const document = new Document(guess.profile);
  const width = Math.max(...guess.guessed.map((entry) => entry.what.length));
  document.commentBefore = [
    ` Written by \`qaas init\` from ${repository}. Every value is a guess: check it before the first run.`,
    "",
    " guessed:",
    ...guess.guessed.map((entry) => `   ${entry.what.padEnd(width)}  ${entry.value}  ← ${entry.from}`),
    ...(guess.missing.length > 0 ? ["", " not found:", ...guess.missing.map((line) => `   ${line}`)] : []),
  ].join("\n");

  const environment = guess.profile.environment as { mode: string };
  commentKey(
    document,
    "environment",
    environment.mode === "managed"
      ? " managed: qaas starts the app with start.command, checks health_path, and stops it after the run.\n Add seed/reset commands if the app has them; they make runs repeatable."
      : " external: start the app yourself at base_url; qaas never writes to it unless allow_writes: true.",
  );
  commentKey(
    document,
    "auth",
    " Guessed from the sign-in route: check the endpoint, the body's field names and where the token comes back\n (token_from: body:<json.path>, header:<name> or cookie:<name>).",
  );
  commentKey(
    document,
    "users",
    [
      " Two accounts of the same role let AUDITOR check one user against the other's data. Fill in each",
      " username and set the variables (in the environment, or in a NAME=value file named by",
      ` environment.secrets_file): ${guess.secrets.join(", ")}. Never write a credential here.`,
      ...(guess.profile.auth === undefined
        ? [
            " No sign-in route was found, so each user carries a token; or describe the sign-in in auth.login.",
          ]
        : []),
    ].join("\n"),
  );
  if (guess.profile.database && (guess.profile.database as { url?: string }).url)
    commentKey(
      document,
      "database",
      " The URL is read from the environment variable named here, never from this file.",
    );
  return document.toString({ lineWidth: 0 });
}

function commentKey(document: Document, key: string, comment: string): void {
  if (!isMap(document.contents)) return;
  const pair = (document.contents.items as Pair[]).find(
    (item) => isScalar(item.key) && item.key.value === key,
  );
  if (pair && isScalar(pair.key)) pair.key.commentBefore = comment;
}

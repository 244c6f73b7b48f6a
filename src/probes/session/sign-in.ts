import { CookieJar } from "./cookie-jar.ts";
import type { Credential, LoginRecipe, ProfileUser, SignInEnvironment } from "./credential.ts";
import { expiryOf, makeCredential, resolveSecret, SignInError } from "./credential.ts";
import { formSignIn } from "./form-sign-in.ts";
import { jsonSignIn } from "./json-sign-in.ts";

// Signing in as the application expects: a static token, a JSON login (token anywhere in the answer, or a
// cookie session with its CSRF cookie), or a browser-like form login (page, CSRF token, redirects, cookies).

export { parseSetCookies } from "./cookie-jar.ts";
export type {
  Credential,
  LoginRecipe,
  ProfileUser,
  SignInEnvironment,
  SignInMemory,
  SignInStep,
  SignupRecipe,
} from "./credential.ts";
export { DEFAULT_RECIPE, SignInError } from "./credential.ts";
export { stringAt } from "./token-search.ts";

export async function signIn(
  user: ProfileUser,
  recipe: LoginRecipe | undefined,
  environment: SignInEnvironment,
): Promise<Credential> {
  if (!recipe || recipe.kind === "bearer" || recipe.kind === "api_key") {
    return staticCredential(user, recipe, environment);
  }
  return recipe.kind === "form"
    ? formSignIn(user, recipe, environment)
    : jsonSignIn(user, recipe, environment);
}

function staticCredential(
  user: ProfileUser,
  recipe: LoginRecipe | undefined,
  environment: SignInEnvironment,
): Credential {
  if (!user.token) {
    throw new SignInError(
      user.name,
      "recipe",
      recipe
        ? `auth.login.kind is ${recipe.kind} but users[${user.name}].token is not set; add token: secret_ref:NAME`
        : "the profile has no auth.login recipe and the user has no token; add auth.login (json, form, bearer or api_key)",
    );
  }
  const token = resolveSecret(user, user.token, `users[${user.name}].token`);
  const now = environment.now();
  return makeCredential({
    token,
    jar: new CookieJar(environment.now),
    obtainedAt: now,
    expiresAt: expiryOf(token, recipe?.ttl_seconds, now),
  });
}

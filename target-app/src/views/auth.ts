import { html } from "./html.ts";
import { layout } from "./layout.ts";

const LOGIN_ERRORS: Record<string, string> = {
  invalid: "Wrong email or password.",
  locked: "Too many failed attempts. Wait a minute and try again.",
  expired: "Your session has expired. Please sign in again.",
  required: "Please sign in to continue.",
};

export function loginPage(options: {
  error?: string | undefined;
  next: string;
  email?: string | undefined;
}): string {
  const message = options.error ? LOGIN_ERRORS[options.error] : undefined;
  return layout({
    title: "Sign in",
    viewer: null,
    active: "login",
    body: html`<section class="card narrow">
  <h1>Sign in to Tasklane</h1>
  ${message ? html`<p class="error" role="alert">${message}</p>` : ""}
  <form method="post" action="/login" class="stack">
    <input type="hidden" name="next" value="${options.next}">
    <label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="username" required value="${options.email ?? ""}">
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required>
    <button type="submit">Sign in</button>
  </form>
  <p class="muted">Sessions last one hour. Ask your workspace admin if you forgot your password.</p>
</section>`,
  });
}

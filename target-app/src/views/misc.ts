import type { Project, TimeEntry } from "../services/projects.ts";
import type { SearchHit } from "../services/search.ts";
import type { UserDto } from "../services/users.ts";
import {
  formatDate,
  formatHours,
  statusLabel,
  type TenantOverview,
  type TenantSettings,
  type WeekTotal,
} from "../services/workspace.ts";
import { html, raw } from "./html.ts";
import { layout, type Viewer } from "./layout.ts";

export function searchPage(viewer: Viewer, q: string, hits: SearchHit[]): string {
  return layout({
    title: "Search",
    viewer,
    active: "search",
    body: html`<h1>Search</h1>
<form method="get" action="/search" class="inline" role="search">
  <label for="q">Search tasks</label>
  <input id="q" name="q" type="search" value="${q}" maxlength="200">
  <button type="submit">Search</button>
</form>
${
  q
    ? html`<p class="muted">${hits.length} results for “${q}”</p>
<ul class="list">${hits.map(
        (hit) =>
          html`<li><a href="/tasks/${hit.id}">${hit.key} ${hit.title}</a> <span class="muted">${hit.project_name} · ${statusLabel(hit.status)}</span></li>`,
      )}</ul>`
    : ""
}`,
  });
}

export function settingsPage(viewer: Viewer, settings: TenantSettings, editable: boolean): string {
  const zones = [
    "UTC",
    "Europe/Berlin",
    "Europe/London",
    "America/Chicago",
    "America/New_York",
    "Asia/Tokyo",
  ];
  return layout({
    title: "Settings",
    viewer,
    active: "settings",
    body: html`<h1>Workspace settings</h1>
${editable ? "" : html`<p class="muted">Only workspace admins can change these settings.</p>`}
<section class="card narrow">
<form class="stack" data-api="PUT /api/admin/settings" data-redirect="/settings">
  <p class="error" role="alert" data-form-error hidden></p>
  <fieldset${editable ? "" : html` disabled`}>
  <select name="timezone">${zones.map(
    (zone) =>
      html`<option value="${zone}"${settings.timezone === zone ? html` selected` : ""}>${zone}</option>`,
  )}</select>
  <label for="week_starts_on">Week starts on</label>
  <select id="week_starts_on" name="week_starts_on">
    <option value="monday"${settings.week_starts_on === "monday" ? html` selected` : ""}>Monday</option>
    <option value="sunday"${settings.week_starts_on === "sunday" ? html` selected` : ""}>Sunday</option>
  </select>
  <label for="default_priority">Default task priority</label>
  <select id="default_priority" name="default_priority">${["low", "medium", "high"].map(
    (value) =>
      html`<option value="${value}"${settings.default_priority === value ? html` selected` : ""}>${value}</option>`,
  )}</select>
  <label class="check"><input type="checkbox" name="allow_member_exports"${settings.allow_member_exports ? html` checked` : ""}> Members may export projects</label>
  <input name="webhook_url" type="url" placeholder="https://hooks.example.com/tasklane" data-nullable value="${settings.webhook_url ?? ""}">
  <button type="submit">Save settings</button>
  </fieldset>
</form>
</section>`,
  });
}

export function adminPage(viewer: Viewer, users: UserDto[]): string {
  return layout({
    title: "Admin",
    viewer,
    active: "admin",
    body: html`<h1>Members</h1>
<p><a href="/settings">Workspace settings</a></p>
<table>
  <thead><tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Joined</th></tr></thead>
  <tbody>${users.map(
    (user) => html`<tr>
    <td>${user.name}</td><td>${user.email}</td>
    <td><form data-api="PATCH /api/admin/users/${user.id}" data-redirect="/admin" class="inline">
      <label for="role-${user.id}" class="sr-only">Role of ${user.name}</label>
      <select id="role-${user.id}" name="role">${["member", "admin"].map(
        (role) => html`<option value="${role}"${user.role === role ? html` selected` : ""}>${role}</option>`,
      )}</select>
      <button type="submit" class="secondary">Save</button></form></td>
    <td>${user.active ? "active" : "deactivated"}</td>
    <td>${formatDate(user.created_at)}</td>
  </tr>`,
  )}</tbody>
</table>
<section class="card narrow">
<h2>Invite a member</h2>
<form class="stack" data-api="POST /api/admin/users" data-redirect="/admin">
  <p class="error" role="alert" data-form-error hidden></p>
  <label for="new-name">Name</label>
  <input id="new-name" name="name" required maxlength="120">
  <label for="new-email">Email</label>
  <input id="new-email" name="email" type="email" required>
  <label for="new-role">Role</label>
  <select id="new-role" name="role"><option value="member">member</option><option value="admin">admin</option></select>
  <label for="new-password">Initial password</label>
  <input id="new-password" name="password" type="password" minlength="12" required autocomplete="new-password">
  <button type="submit">Add member</button>
</form>
</section>`,
  });
}

export function platformPage(viewer: Viewer, tenants: TenantOverview[]): string {
  return layout({
    title: "Platform",
    viewer,
    active: "platform",
    body: html`<h1>Workspaces</h1>
<table>
  <thead><tr><th scope="col">Name</th><th scope="col">Slug</th><th scope="col">Plan</th><th scope="col">Users</th><th scope="col">Projects</th><th scope="col">Created</th></tr></thead>
  <tbody>${tenants.map(
    (tenant) =>
      html`<tr><td>${tenant.name}</td><td>${tenant.slug}</td><td>${tenant.plan}</td><td>${tenant.users}</td><td>${tenant.projects}</td><td>${formatDate(tenant.created_at)}</td></tr>`,
  )}</tbody>
</table>`,
  });
}

export function timesheetPage(
  viewer: Viewer,
  sheet: { entries: TimeEntry[]; total: number; projects: Project[]; weeks: WeekTotal[] },
): string {
  const { entries, total, projects } = sheet;
  return layout({
    title: "Timesheet",
    viewer,
    body: html`<h1>My timesheet</h1>
<p class="muted">${formatHours(total)} logged in your last ${entries.length} entries.</p>
<ul class="list">${sheet.weeks.map((week) => html`<li>Week of ${formatDate(week.week)}: ${formatHours(week.hours)}</li>`)}</ul>
<section class="card narrow">
<h2>Log time</h2>
<form class="stack" data-api="POST /api/projects/{project_id}/time-entries" data-redirect="/time">
  <p class="error" role="alert" data-form-error hidden></p>
  <label for="project_id">Project</label>
  <select id="project_id" name="project_id">${projects.map(
    (project) => html`<option value="${project.id}">${project.key} · ${project.name}</option>`,
  )}</select>
  <label for="hours">Hours</label>
  <input id="hours" name="hours" type="number" min="0.25" max="24" step="0.25" required>
  <label for="note">Note</label>
  <input id="note" name="note" maxlength="500">
  <button type="submit">Log time</button>
</form>
</section>
<table>
  <thead><tr><th scope="col">Date</th><th scope="col">Project</th><th scope="col">Hours</th><th scope="col">Note</th></tr></thead>
  <tbody>${entries.map(
    (entry) =>
      html`<tr><td>${formatDate(entry.spent_on)}</td><td><a href="/projects/${entry.project_id}">#${entry.project_id}</a></td><td>${formatHours(entry.hours)}</td><td>${entry.note}</td></tr>`,
  )}</tbody>
</table>`,
  });
}

interface HelpTopic {
  title: string;
  body: string;
}

const HELP_TOPICS: Record<string, HelpTopic> = {
  "getting-started": {
    title: "Getting started",
    body: `<p>Sign in with the email address your workspace admin registered. The dashboard lists the tasks
      assigned to you, recently updated projects and a live activity feed.</p>`,
  },
  projects: {
    title: "Projects",
    body: `<p>Every project has a short key such as <code>WEB</code>; its tasks are numbered WEB-1, WEB-2 and so on.
      A project has an hour budget: time logged against it is subtracted from the hours left.</p>
      <p>Deleting a project moves it to the trash. Workspace admins can restore it from
      <strong>Settings → Trash</strong> for 30 days.</p>`,
  },
  tasks: {
    title: "Tasks",
    body: `<p>Tasks move from <em>To do</em> to <em>In progress</em> to <em>Done</em>. Use comments to discuss
      a task; everyone in the workspace sees new comments live.</p>`,
  },
  search: {
    title: "Search",
    body: `<p>Search matches words in task titles and descriptions. Results show the newest changes first.</p>`,
  },
  exports: {
    title: "Exports",
    body: `<p>Project pages have an <strong>Export CSV</strong> button. Admins can allow or forbid exports for
      members in the workspace settings.</p>`,
  },
  realtime: {
    title: "Live updates",
    body: `<p>Pages update live over a WebSocket at <code>/ws</code>. Every event carries a sequence number
      <code>seq</code>. After a reconnect, pass <code>?since=&lt;last seq&gt;</code> to receive the events you
      missed (up to the last 200).</p>`,
  },
};

export function helpPage(viewer: Viewer | null, topic: string | null): string {
  const selected = topic ? HELP_TOPICS[topic] : undefined;
  const nav = Object.entries(HELP_TOPICS).map(
    ([slug, entry]) =>
      html`<li><a href="/help?topic=${slug}"${slug === topic ? html` aria-current="page"` : ""}>${entry.title}</a></li>`,
  );
  let content = html`<p>Pick a topic on the left.</p>`;
  if (selected) content = html`<h2>${selected.title}</h2>${raw(selected.body)}`;
  else if (topic) content = raw(`<p class="error">No help topic called “${topic}”.</p>`);
  return layout({
    title: "Help",
    viewer,
    active: "help",
    body: html`<h1>Help</h1>
<div class="columns help">
  <nav aria-label="Help topics"><ul class="list">${nav}</ul></nav>
  <article>${content}</article>
</div>`,
  });
}

// DEMO-45: the contact form thanks the person whatever the server answered. The endpoint it posts to was
// never built, so every request fails (404) while the page says it was sent.
export function supportPage(viewer: Viewer | null): string {
  return layout({
    title: "Contact support",
    viewer,
    scripts: ["/static/support.js"],
    body: html`<h1>Contact support</h1>
<section class="card narrow">
<form class="stack" id="support-form">
  <label for="support-email">Your email</label>
  <input id="support-email" name="email" type="email" required>
  <label for="support-message">How can we help?</label>
  <textarea id="support-message" name="message" required maxlength="2000"></textarea>
  <button type="submit">Send</button>
</form>
<p class="notice" role="status" id="support-status"></p>
</section>`,
  });
}

export function notFoundPage(viewer: Viewer | null, path: string): string {
  return layout({
    title: "Not found",
    viewer,
    body: html`<h1>Page not found</h1>
<p>There is nothing at <code>${path}</code>.</p>
<p><a href="${viewer ? "/dashboard" : "/login"}">Go to the start page</a></p>`,
  });
}

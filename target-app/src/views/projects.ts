import type { Project } from "../services/projects.ts";
import type { TaskListItem } from "../services/tasks.ts";
import {
  boardColumns,
  formatDate,
  formatHours,
  type PageLink,
  priorityLabel,
  statusLabel,
} from "../services/workspace.ts";
import { html } from "./html.ts";
import { layout, type Viewer } from "./layout.ts";

export function projectsListPage(
  viewer: Viewer,
  projects: Project[],
  links: PageLink[],
  total: number,
): string {
  return layout({
    title: "Projects",
    viewer,
    active: "projects",
    body: html`<div class="heading"><h1>Projects</h1><a class="button" href="/projects/new">New project</a></div>
<p class="muted">${total} projects</p>
<table>
  <thead><tr><th scope="col">Key</th><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Hours left</th><th scope="col">Updated</th></tr></thead>
  <tbody>${projects.map(
    (project) => html`<tr>
    <td>${project.key}</td>
    <td><a href="/projects/${project.id}">${project.name}</a></td>
    <td>${statusLabel(project.status)}</td>
    <td>${formatHours(project.hours_remaining)}</td>
    <td>${formatDate(project.updated_at)}</td>
  </tr>`,
  )}</tbody>
</table>
<nav class="pager" aria-label="Pages">${links.map((link) =>
      link.current
        ? html`<span aria-current="page">${link.page}</span>`
        : html`<a href="${link.href}">${link.page}</a>`,
    )}</nav>`,
  });
}

interface ProjectView {
  id: number;
  key: string;
  name: string;
  description: string;
  status: string;
  budget_hours: number;
  hours_remaining: string;
  owner: { id: number; name: string } | null;
}

export function projectDetailPage(
  viewer: Viewer,
  project: ProjectView,
  tasks: TaskListItem[],
  canExport: boolean,
): string {
  const columns = boardColumns(tasks);
  const column = (status: string) => html`<section class="column" aria-labelledby="col-${status}">
    <h2 id="col-${status}">${statusLabel(status)} <span class="muted">${columns[status]?.length ?? 0}</span></h2>
    <ul class="list">${(columns[status] ?? []).map(
      (task) => html`<li><a href="/tasks/${task.id}">${task.key} ${task.title}</a>
        <span class="muted">${priorityLabel(task.priority)} · ${task.assignee?.name ?? "Unassigned"} · ${task.comment_count} comments</span></li>`,
    )}</ul></section>`;
  return layout({
    title: project.name,
    viewer,
    active: "projects",
    body: html`<p><a href="/projects">← Projects</a></p>
<div class="heading"><h1>${project.key} · ${project.name}</h1>
  <div class="actions">
    <a class="button" href="/projects/${project.id}/tasks/new">New task</a>
    <a class="button secondary" href="/projects/${project.id}/edit">Edit</a>
    ${canExport ? html`<button type="button" class="secondary" data-export="/api/projects/${project.id}/export?format=csv">Export CSV</button>` : ""}
  </div>
</div>
<p>${project.description}</p>
<p class="muted">${statusLabel(project.status)} · owner ${project.owner?.name ?? "nobody"} · budget ${formatHours(project.budget_hours)}, ${project.hours_remaining} h left</p>
<div class="board">${column("todo")}${column("in_progress")}${column("done")}</div>`,
  });
}

export function projectFormPage(viewer: Viewer, project: ProjectView | null): string {
  const editing = project !== null;
  return layout({
    title: editing ? `Edit ${project.key}` : "New project",
    viewer,
    active: "projects",
    body: html`<p><a href="${editing ? `/projects/${project.id}` : "/projects"}">← Back</a></p>
<section class="card narrow">
<h1>${editing ? `Edit ${project.key}` : "New project"}</h1>
<form class="stack" data-api="${editing ? `PATCH /api/projects/${project.id}` : "POST /api/projects"}" data-redirect="/projects/{id}">
  <p class="error" role="alert" data-form-error hidden></p>
  ${
    editing
      ? ""
      : html`<label for="key">Key</label>
  <input id="key" name="key" required pattern="[A-Za-z][A-Za-z0-9]{1,9}" maxlength="10" aria-describedby="key-help">
  <small id="key-help">2–10 letters or digits, used in task numbers such as WEB-12.</small>`
  }
  <label for="name">Name</label>
  <input id="name" name="name" required maxlength="120" value="${project?.name ?? ""}">
  <label for="description">Description</label>
  <textarea id="description" name="description" rows="4" maxlength="2000">${project?.description ?? ""}</textarea>
  <label for="status">Status</label>
  <select id="status" name="status">
    ${["active", "on_hold", "archived"].map(
      (status) =>
        html`<option value="${status}"${project?.status === status ? html` selected` : ""}>${statusLabel(status)}</option>`,
    )}
  </select>
  <label for="budget_hours">Budget (hours)</label>
  <input id="budget_hours" name="budget_hours" type="number" min="0" step="0.5" value="${project?.budget_hours ?? 0}">
  <button type="submit">${editing ? "Save changes" : "Create project"}</button>
</form>
${
  editing
    ? html`<button type="button" class="danger" data-action="DELETE /api/projects/${project.id}" data-confirm="Delete ${project.key} and all its tasks?" data-redirect="/projects">Delete project</button>`
    : ""
}
</section>`,
  });
}

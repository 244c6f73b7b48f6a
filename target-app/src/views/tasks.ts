import type { ActivityItem } from "../services/activity.ts";
import type { Task } from "../services/tasks.ts";
import {
  DUE_LABELS,
  dueState,
  formatDate,
  formatHours,
  priorityLabel,
  relativeTime,
  statusLabel,
  type TaskPage,
} from "../services/workspace.ts";
import { html } from "./html.ts";
import { layout, type Viewer } from "./layout.ts";

export function taskDetailPage(viewer: Viewer, page: TaskPage): string {
  const { task } = page;
  return layout({
    title: `${task.key} ${task.title}`,
    viewer,
    active: "projects",
    body: html`<p><a href="/projects/${page.project.id}">← ${page.project.key}</a></p>
<div class="heading"><h1>${task.key} · ${task.title}</h1>
  <div class="actions">
    <a class="button secondary" href="/tasks/${task.id}/edit">Edit</a>
    <a class="button secondary" href="/tasks/${task.id}/history">History</a>
    <button type="button" class="danger" data-action="DELETE /api/tasks/${task.id}" data-confirm="Delete ${task.key}?" data-redirect="/projects/${page.project.id}">Delete</button>
  </div>
</div>
<dl class="facts">
  <dt>Status</dt><dd>${statusLabel(task.status)}</dd>
  <dt>Priority</dt><dd>${priorityLabel(task.priority)}</dd>
  <dt>Assignee</dt><dd>${page.assignee ?? "Unassigned"}</dd>
  <dt>Estimate</dt><dd>${formatHours(task.estimate_hours)}</dd>
  <dt>Due</dt><dd>${formatDate(task.due_date)} ${DUE_LABELS[dueState(task)]}</dd>
</dl>
<p class="description">${task.description || "No description."}</p>
<section class="card">
  <h2>Comments</h2>
  <ul class="list">${page.comments.map(
    (
      comment,
    ) => html`<li><strong>${comment.author_name}</strong> <span class="muted">${relativeTime(comment.created_at)}</span>
      <p>${comment.body}</p></li>`,
  )}</ul>
  <form class="stack" data-api="POST /api/tasks/${task.id}/comments" data-redirect="/tasks/${task.id}">
    <p class="error" role="alert" data-form-error hidden></p>
    <label for="comment-body">Add a comment</label>
    <textarea id="comment-body" name="body" rows="3" required maxlength="4000"></textarea>
    <button type="submit">Comment</button>
  </form>
</section>`,
  });
}

export function taskFormPage(
  viewer: Viewer,
  options: {
    project: { id: number; key: string };
    task: Task | null;
    members: { id: number; name: string }[];
    defaultPriority: string;
  },
): string {
  const { task, project } = options;
  const editing = task !== null;
  const priority = task?.priority ?? options.defaultPriority;
  return layout({
    title: editing ? `Edit ${task.key}` : `New task in ${project.key}`,
    viewer,
    active: "projects",
    body: html`<p><a href="${editing ? `/tasks/${task.id}` : `/projects/${project.id}`}">← Back</a></p>
<section class="card narrow">
<h1>${editing ? `Edit ${task.key}` : `New task in ${project.key}`}</h1>
<form class="stack" data-api="${editing ? `PATCH /api/tasks/${task.id}` : `POST /api/projects/${project.id}/tasks`}" data-redirect="/tasks/{id}">
  <p class="error" role="alert" data-form-error hidden></p>
  <label for="title">Title</label>
  <input id="title" name="title" required maxlength="200" value="${task?.title ?? ""}">
  <label for="description">Description</label>
  <textarea id="description" name="description" rows="5" maxlength="5000">${task?.description ?? ""}</textarea>
  <label for="status">Status</label>
  <select id="status" name="status">${["todo", "in_progress", "done"].map(
    (status) =>
      html`<option value="${status}"${(task?.status ?? "todo") === status ? html` selected` : ""}>${statusLabel(status)}</option>`,
  )}</select>
  <label for="priority">Priority</label>
  <select id="priority" name="priority">${["low", "medium", "high"].map(
    (value) =>
      html`<option value="${value}"${priority === value ? html` selected` : ""}>${priorityLabel(value)}</option>`,
  )}</select>
  <label for="assignee_id">Assignee</label>
  <select id="assignee_id" name="assignee_id" data-type="number" data-nullable>
    <option value="">Unassigned</option>
    ${options.members.map(
      (member) =>
        html`<option value="${member.id}"${task?.assignee_id === member.id ? html` selected` : ""}>${member.name}</option>`,
    )}
  </select>
  <label for="estimate_hours">Estimate (hours)</label>
  <input id="estimate_hours" name="estimate_hours" type="number" min="0" max="1000" step="0.5" data-nullable value="${task?.estimate_hours ?? ""}">
  <label for="due_date">Due date</label>
  <input id="due_date" name="due_date" type="date" data-nullable value="${task?.due_date ?? ""}">
  <button type="submit">${editing ? "Save changes" : "Create task"}</button>
</form>
</section>`,
  });
}

/** Printable change log of one task. */
export function taskHistoryPage(task: Task, entries: ActivityItem[]): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>History of ${task.key} · Tasklane</title>
<link rel="stylesheet" href="/static/app.css">
</head>
<body class="print">
<main>
<h1>History of ${task.key} · ${task.title}</h1>
<table>
  <thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th></tr></thead>
  <tbody>${entries.map(
    (entry) =>
      html`<tr><td>${formatDate(entry.created_at)}</td><td>${entry.actor_name ?? "Someone"}</td><td>${entry.verb} ${entry.subject}</td></tr>`,
  )}</tbody>
</table>
</main>
</body>
</html>`.value;
}

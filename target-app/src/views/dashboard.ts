import {
  type Dashboard,
  DUE_LABELS,
  dueState,
  formatDate,
  relativeTime,
  statusLabel,
} from "../services/workspace.ts";
import { html } from "./html.ts";
import { layout, type Viewer } from "./layout.ts";

export function dashboardPage(viewer: Viewer, data: Dashboard): string {
  const myTasks = data.myTasks.length
    ? html`<ul class="list">${data.myTasks.map(
        (task) =>
          html`<li><a href="/tasks/${task.id}">${task.key} ${task.title}</a>
            <span class="badge">${statusLabel(task.status)}</span> <span class="muted">due ${formatDate(task.due_date)}</span>
            ${DUE_LABELS[dueState(task)] ? html`<strong class="error">${DUE_LABELS[dueState(task)]}</strong>` : ""}</li>`,
      )}</ul>`
    : html`<p class="muted">Nothing assigned to you. Enjoy the quiet.</p>`;
  return layout({
    title: "Dashboard",
    viewer,
    active: "dashboard",
    scripts: ["/static/dashboard.js"],
    body: html`<h1>${data.tenant}</h1>
<section class="stats" aria-label="Summary">
  <div class="stat"><span class="stat-value" id="stat-open">${data.openTasks}</span> open tasks</div>
  <div class="stat"><span class="stat-value">${data.dueThisWeek}</span> due this week</div>
  <div class="stat"><span class="stat-value">${data.activeProjects}</span> active projects</div>
</section>
<div class="columns">
  <section class="card">
    <h2>My open tasks</h2>
    ${myTasks}
  </section>
  <section class="card">
    <h2>Recently updated projects</h2>
    <ul class="list">${data.projects.map(
      (project) => html`<li><a href="/projects/${project.id}">${project.key} · ${project.name}</a></li>`,
    )}</ul>
    <p><a href="/projects/new">New project</a></p>
  </section>
</div>
<section class="card">
  <h2>Activity <span class="live" id="live-status">offline</span></h2>
  <ul class="list" id="live-activity">${data.activity.map(
    (item) =>
      html`<li>${item.actor_name ?? "Someone"} ${item.verb} ${item.subject}
        <span class="muted">${relativeTime(item.created_at)}</span></li>`,
  )}</ul>
</section>
<section class="card">
  <h2>Velocity</h2>
  <div id="velocity-chart" class="chart" role="img" aria-label="Tasks completed per week"
    data-weeks="${JSON.stringify(data.velocity)}"></div>
</section>`,
  });
}

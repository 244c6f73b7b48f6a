import { html, type SafeHtml } from "./html.ts";

export interface Viewer {
  name: string;
  role: string;
  tenant: string;
}

export interface LayoutOptions {
  title: string;
  viewer: Viewer | null;
  active?: string;
  body: SafeHtml;
  scripts?: string[];
}

interface NavItem {
  href: string;
  label: string;
  key: string;
}

function navItems(viewer: Viewer | null): NavItem[] {
  if (!viewer) {
    return [
      { href: "/help", label: "Help", key: "help" },
      { href: "/login", label: "Sign in", key: "login" },
    ];
  }
  const items: NavItem[] = [
    { href: "/dashboard", label: "Dashboard", key: "dashboard" },
    { href: "/projects", label: "Projects", key: "projects" },
    { href: "/search", label: "Search", key: "search" },
    { href: "/reports", label: "Reports", key: "reports" },
    { href: "/settings", label: "Settings", key: "settings" },
  ];
  if (viewer.role === "admin") items.push({ href: "/admin", label: "Admin", key: "admin" });
  if (viewer.role === "platform_admin") items.push({ href: "/platform", label: "Platform", key: "platform" });
  items.push({ href: "/help", label: "Help", key: "help" });
  return items;
}

export function layout(options: LayoutOptions): string {
  const { viewer } = options;
  const nav = navItems(viewer).map(
    (item) =>
      html`<a href="${item.href}"${item.key === options.active ? html` aria-current="page"` : ""}>${item.label}</a>`,
  );
  const scripts = ["/static/app.js", ...(options.scripts ?? [])].map(
    (src) => html`<script src="${src}" defer></script>`,
  );
  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · Tasklane</title>
<link rel="icon" href="/static/logo.svg" type="image/svg+xml">
<link rel="stylesheet" href="/static/app.css">
${scripts}
</head>
<body>
<header class="topbar">
  <a class="brand" href="${viewer ? "/dashboard" : "/login"}"><img src="/static/logo.svg" alt="" width="24" height="24"> Tasklane</a>
  <nav aria-label="Main">${nav}</nav>
  ${
    viewer
      ? html`<div class="account"><span>${viewer.name} · ${viewer.tenant}</span>
    <form method="post" action="/logout"><button type="submit" class="link">Sign out</button></form></div>`
      : ""
  }
</header>
<main id="main">
${options.body}
</main>
<footer class="footer"><a href="/help">Help</a> · <a href="/support">Contact support</a> · Tasklane 1.4</footer>
</body>
</html>`;
  return page.value;
}

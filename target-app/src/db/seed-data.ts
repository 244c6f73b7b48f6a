// Static demo content used by the seed. Plain data, no logic.

export interface SeedTenant {
  slug: string;
  name: string;
  plan: "free" | "team" | "enterprise";
  timezone: string;
}

export interface SeedUser {
  tenant: string;
  email: string;
  name: string;
  role: "member" | "admin" | "platform_admin";
  passwordHash: string;
}

export interface SeedProject {
  tenant: string;
  key: string;
  name: string;
  description: string;
  status: "active" | "on_hold" | "archived";
  owner: string;
  budgetHours: number;
  taskCount: number;
}

export const TENANTS: SeedTenant[] = [
  { slug: "acme", name: "Acme Robotics", plan: "team", timezone: "Europe/Berlin" },
  { slug: "globex", name: "Globex Logistics", plan: "enterprise", timezone: "America/Chicago" },
  { slug: "tasklane-ops", name: "Tasklane Operations", plan: "enterprise", timezone: "UTC" },
];

export const USERS: SeedUser[] = [
  {
    tenant: "acme",
    email: "adam@acme.test",
    name: "Adam Alvarez",
    role: "admin",
    passwordHash: "scrypt$16384$GH7yrcdp2kPrGJWyojxebA$qCbIhd7UjXD5iV4rQBtII61fkG0mE57QGXWQlG4ULQM",
  },
  {
    tenant: "acme",
    email: "alice@acme.test",
    name: "Alice Archer",
    role: "member",
    passwordHash: "scrypt$16384$JQr-Y_RoF6m0IztNJdLM6g$AKCcVhoddECyLIIlvX_2kQEtQdyykXECy0qXLbSkCYo",
  },
  {
    tenant: "acme",
    email: "carol@acme.test",
    name: "Carol Chen",
    role: "member",
    passwordHash: "scrypt$16384$13QRiZiRW1rZKJcNKgOq3w$_hiVJjIXADZurP0P_47VZktg9cSRHB9xbYcJENhlYQM",
  },
  {
    tenant: "acme",
    email: "dave@acme.test",
    name: "Dave Dimitrov",
    role: "member",
    passwordHash: "scrypt$16384$N9xXDqedmwdPR_2hNsAhtw$YBd61MxcCiiNouQb0PnYWJbh8N_X5jj7OqKzy27ftfA",
  },
  {
    tenant: "acme",
    email: "erin@acme.test",
    name: "Erin Eze",
    role: "member",
    passwordHash: "scrypt$16384$5IqMauSXqtx_G5GXwi5NNA$GcM61e8-lq_0MgZKTOmWIQb0QPLtPQPi5VBX_8voROE",
  },
  {
    tenant: "globex",
    email: "gina@globex.test",
    name: "Gina Garcia",
    role: "admin",
    passwordHash: "scrypt$16384$9luCluvE_wB6tlDKcjgWnA$BXXXjZ_jlxsP-wSwQi-JBgz46z0Exjs1oWqxEm_wW1k",
  },
  {
    tenant: "globex",
    email: "bob@globex.test",
    name: "Bob Becker",
    role: "member",
    passwordHash: "scrypt$16384$FWTuRAHARDq6ZV2fRnSjbQ$mwgk5y1olTxTwYrLvPKvSQlCd4m6FgjegmvV9_YZuCs",
  },
  {
    tenant: "globex",
    email: "hank@globex.test",
    name: "Hank Holm",
    role: "member",
    passwordHash: "scrypt$16384$_oAqC20FLzfGTuM1AApwKg$hQIbBcmeWms6BnBl2mdJ7us-RL3tNSsuGH91O2rhVKc",
  },
  {
    tenant: "tasklane-ops",
    email: "root@tasklane.test",
    name: "Rita Root",
    role: "platform_admin",
    passwordHash: "scrypt$16384$ZcX6CMBo5kQUB3YwCDyj4A$w-QbEyYN8kOFXVqNbwRFPw6wyOEZSO2ci9LzRDxelxc",
  },
];

export const PROJECTS: SeedProject[] = [
  {
    tenant: "acme",
    key: "WEB",
    name: "Website relaunch",
    description: "New marketing site with the product configurator and a faster checkout.",
    status: "active",
    owner: "adam@acme.test",
    budgetHours: 320,
    taskCount: 16,
  },
  {
    tenant: "acme",
    key: "MOB",
    name: "Mobile app 2.0",
    description: "Offline mode, push notifications and the redesigned robot dashboard.",
    status: "active",
    owner: "alice@acme.test",
    budgetHours: 480,
    taskCount: 18,
  },
  {
    tenant: "acme",
    key: "OPS",
    name: "Infrastructure upkeep",
    description: "Patching, backups, monitoring and the yearly disaster-recovery drill.",
    status: "active",
    owner: "dave@acme.test",
    budgetHours: 200,
    taskCount: 14,
  },
  {
    tenant: "acme",
    key: "DOC",
    name: "Customer documentation",
    description: "Installation guides and safety manuals for the R-series arms.",
    status: "on_hold",
    owner: "carol@acme.test",
    budgetHours: 120,
    taskCount: 12,
  },
  {
    tenant: "globex",
    key: "FLT",
    name: "Fleet tracking",
    description: "Live truck positions and ETA estimates for the dispatch desk.",
    status: "active",
    owner: "gina@globex.test",
    budgetHours: 400,
    taskCount: 15,
  },
  {
    tenant: "globex",
    key: "WH",
    name: "Warehouse scanners",
    description: "Replace the handheld scanner software in the three Midwest warehouses.",
    status: "active",
    owner: "bob@globex.test",
    budgetHours: 260,
    taskCount: 13,
  },
  {
    tenant: "globex",
    key: "CRM",
    name: "CRM migration",
    description: "Move customer accounts and contracts to the new CRM before renewal season.",
    status: "archived",
    owner: "hank@globex.test",
    budgetHours: 150,
    taskCount: 11,
  },
];

export const TASK_TITLES: string[] = [
  "Set up the staging environment",
  "Write the release checklist",
  "Fix the login redirect loop on Safari",
  "Add pagination to the order history",
  "Review the color palette with design",
  "Migrate image storage to the new bucket",
  "Draft the onboarding email sequence",
  "Profile the slow dashboard query",
  "Add unit tests for the price calculator",
  "Translate the settings screen into German",
  "Replace the deprecated date picker",
  "Document the public API rate limits",
  "Audit third-party scripts on the homepage",
  "Create the 404 and 500 error pages",
  "Add keyboard navigation to the menu",
  "Rotate the database credentials",
  "Set up uptime alerts for the API",
  "Clean up unused feature flags",
  "Write the incident runbook",
  "Prepare the quarterly demo",
  "Fix the timezone bug in reminders",
  "Add CSV import for contacts",
  "Compress hero images",
  "Benchmark the search endpoint",
  "Update the privacy policy page",
  "Add dark mode to the mobile app",
  "Implement offline sync for tasks",
  "Investigate crash on Android 14",
  "Add push notification settings",
  "Refactor the navigation drawer",
  "Design the empty states",
  "Upgrade the TLS certificates",
  "Move the cron jobs to the scheduler",
  "Test the backup restore procedure",
  "Patch the load balancer",
  "Reduce log retention to 30 days",
  "Write the installation guide for R-200",
  "Photograph the mounting brackets",
  "Review the safety manual with legal",
  "Publish the troubleshooting FAQ",
  "Map the dispatch desk workflow",
  "Integrate the GPS provider webhook",
  "Show ETA on the driver screen",
  "Cache map tiles on the tablets",
  "Train the warehouse leads",
  "Pilot the scanner app in Joliet",
  "Fix barcode parsing for GS1 labels",
  "Export contracts from the old CRM",
  "Clean duplicate customer accounts",
  "Verify renewal dates after import",
  "Add audit logging to the admin screens",
  "Tune the autoscaling thresholds",
  "Write end-to-end tests for checkout",
  "Add retry logic to the payment webhook",
  "Shorten the signup form",
];

export const TASK_DESCRIPTIONS: string[] = [
  "Agreed in the Monday planning meeting. Keep the scope small and ship behind a flag.",
  "Customer support reported this twice last week; see the linked tickets for screenshots.",
  "Needs a short design review before implementation starts.",
  "Pair with someone from the platform team; they know the history here.",
  "Acceptance: works on the three supported browsers and passes the accessibility check.",
  "Low risk, but it touches the billing code, so ask for a second review.",
  "Blocked until the vendor sends the sandbox credentials.",
  "Follow the checklist in the wiki and attach the results to this task.",
  "",
  "Timebox to one day; if it takes longer, split it up.",
];

export const COMMENTS: string[] = [
  "I can pick this up after the standup.",
  "Pushed a first draft, feedback welcome.",
  "This is more work than estimated, I'd bump it to 8 hours.",
  "Looks good to me.",
  "Can we move this to next sprint?",
  "Blocked on access to the staging database.",
  "Done on my side, please verify.",
  "The vendor replied, we can go ahead.",
  "Added screenshots to the shared drive.",
  "I reproduced it on my phone as well.",
  "Let's discuss in Thursday's sync.",
  "Merged, will deploy tomorrow morning.",
  "Reopened: the fix does not cover the edge case with empty carts.",
  "Design signed off.",
  "Updated the estimate after the spike.",
  "Customer confirmed the workaround helps.",
];

export const TIME_NOTES: string[] = [
  "Planning",
  "Implementation",
  "Code review",
  "Testing",
  "Meeting with stakeholders",
  "Bug fixing",
  "Documentation",
  "Deployment",
];

export const PRIORITIES = ["low", "medium", "medium", "high"] as const;
export const STATUSES = ["todo", "todo", "in_progress", "done"] as const;

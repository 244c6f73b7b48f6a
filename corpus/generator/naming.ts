import crypto from "node:crypto";
import type { CorpusServer } from "../model/servers.ts";
import type { Place } from "./endpoint.ts";

// Neutral, resource-like paths derived from a hash of the variant id: nothing in a path says which family a
// variant belongs to or whether it is the vulnerable one. The same id on the same server always gets the
// same path; a rare clash is resolved by rehashing, in table order.

const PREFIXES: Record<string, string[]> = {
  node: ["/api", "/api/v1"],
  python: ["/api", "/app/api"],
};

const GROUPS = [
  "catalog",
  "stock",
  "billing",
  "crm",
  "fleet",
  "support",
  "inventory",
  "logistics",
  "media",
  "reports",
  "accounts",
  "projects",
  "library",
  "studio",
  "garden",
  "clinic",
  "travel",
  "events",
  "payroll",
  "kitchen",
  "atlas",
  "harbor",
  "orchard",
  "quarry",
];

const NOUNS: Array<[string, string]> = [
  ["parcels", "parcel"],
  ["invoices", "invoice"],
  ["ledgers", "ledger"],
  ["badges", "badge"],
  ["tickets", "ticket"],
  ["notes", "note"],
  ["folders", "folder"],
  ["shipments", "shipment"],
  ["vouchers", "voucher"],
  ["receipts", "receipt"],
  ["contracts", "contract"],
  ["quotes", "quote"],
  ["bookings", "booking"],
  ["visits", "visit"],
  ["patients", "patient"],
  ["recipes", "recipe"],
  ["menus", "menu"],
  ["batches", "batch"],
  ["crates", "crate"],
  ["pallets", "pallet"],
  ["routes", "route"],
  ["drivers", "driver"],
  ["vehicles", "vehicle"],
  ["albums", "album"],
  ["tracks", "track"],
  ["photos", "photo"],
  ["reels", "reel"],
  ["boards", "board"],
  ["cards", "card"],
  ["tasks", "task"],
  ["sprints", "sprint"],
  ["issues", "issue"],
  ["releases", "release"],
  ["builds", "build"],
  ["assets", "asset"],
  ["licenses", "license"],
  ["seats", "seat"],
  ["rooms", "room"],
  ["desks", "desk"],
  ["lockers", "locker"],
  ["plots", "plot"],
  ["seeds", "seed"],
  ["harvests", "harvest"],
  ["orders", "order"],
  ["carts", "cart"],
  ["coupons", "coupon"],
  ["refunds", "refund"],
  ["payouts", "payout"],
  ["grants", "grant"],
  ["budgets", "budget"],
  ["forecasts", "forecast"],
  ["surveys", "survey"],
  ["answers", "answer"],
  ["polls", "poll"],
  ["threads", "thread"],
  ["posts", "post"],
  ["comments", "comment"],
  ["reviews", "review"],
  ["ratings", "rating"],
  ["lessons", "lesson"],
  ["courses", "course"],
  ["exams", "exam"],
  ["shifts", "shift"],
  ["rosters", "roster"],
  ["timesheets", "timesheet"],
  ["permits", "permit"],
  ["claims", "claim"],
  ["policies", "policy"],
  ["leases", "lease"],
  ["tenancies", "tenancy"],
  ["meters", "meter"],
  ["readings", "reading"],
  ["sensors", "sensor"],
  ["alerts", "alert"],
  ["probes", "probe"],
  ["kits", "kit"],
  ["spares", "spare"],
  ["tools", "tool"],
  ["molds", "mold"],
  ["samples", "sample"],
  ["swatches", "swatch"],
  ["fabrics", "fabric"],
  ["itineraries", "itinerary"],
  ["fares", "fare"],
  ["passes", "pass"],
  ["venues", "venue"],
  ["stalls", "stall"],
  ["vendors", "vendor"],
  ["donors", "donor"],
  ["pledges", "pledge"],
];

export class Namer {
  private readonly taken = new Map<string, Set<string>>();

  /** The place of one variant on one server. */
  place(server: CorpusServer, variantId: string): Place {
    const used = this.taken.get(server.name) ?? new Set<string>();
    this.taken.set(server.name, used);
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const digest = crypto.createHash("sha256").update(`${server.name}/${variantId}/${attempt}`).digest();
      const prefixes = PREFIXES[server.stack]!;
      const prefix = prefixes[digest[0]! % prefixes.length]!;
      const group = GROUPS[digest.readUInt16BE(1) % GROUPS.length]!;
      const [plural, singular] = NOUNS[digest.readUInt16BE(3) % NOUNS.length]!;
      const key = `${group}/${plural}`;
      if (used.has(key)) continue;
      used.add(key);
      const slug = `${group}_${plural}`;
      return {
        base: `${prefix}/${group}/${plural}`,
        group,
        plural,
        singular,
        kind: `${group}-${plural}`,
        slug,
      };
    }
    throw new Error(`no free name for variant ${variantId} on ${server.name}: extend NOUNS or GROUPS`);
  }
}

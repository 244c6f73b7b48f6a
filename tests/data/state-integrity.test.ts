import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { dbTools } from "../../src/tools/servers/db-server.ts";
import { callTool, fakeRunContext } from "../support/fake-run-context.ts";
import { type StateApp, startStateApp, stateMap, stateTarget } from "./fixtures/state-app.ts";

// probe_state_integrity against tests/data/fixtures/state-app.ts: each flaw is found through the API alone
// and confirmed by a read-back; each look-alike (a refused or idempotent repeat, a counter meant to repeat,
// a recomputed total, a compared version) is left alone.

let app: StateApp;
beforeAll(async () => {
  app = await startStateApp();
});
afterAll(async () => {
  await app?.stop();
});

interface Answer {
  candidates: EnvelopeDraft[];
  stats: { outcomes: Array<{ target: string; result: string }> };
}

async function probe(filter: string): Promise<Answer> {
  const tool = dbTools.find((candidate) => candidate.name === "probe_state_integrity")!;
  const context = fakeRunContext({ target: stateTarget(app), systemMap: stateMap(app) });
  const result = await callTool(tool, { filter }, context);
  if (!result.ok) throw new Error(result.error);
  return result.data as Answer;
}

const flagged = (answer: Answer) => answer.candidates.map((draft) => draft.location.value).sort();
const outcome = (answer: Answer, target: string) =>
  answer.stats.outcomes.find((entry) => entry.target === target)?.result;

describe("probe_state_integrity", () => {
  it("flags a one-shot transition whose repeat adds again, not a refused, idempotent or plain counter", async () => {
    const answer = await probe("/api/");
    const repeats = answer.candidates.filter((draft) => draft.title.includes("can be repeated"));
    expect(repeats.map((draft) => draft.location.value).sort()).toEqual([
      "POST /api/checkouts/{id}/return",
      "POST /api/loans/{id}/return",
      "POST /api/tickets/{id}/pay",
    ]);
    expect(repeats[0]).toMatchObject({ domain: "data", defect_class: "data-integrity" });
    expect(repeats.find((draft) => draft.location.value.includes("loans"))!.summary).toMatch(
      /in_stock, read back through the record, moved by 1 again/,
    );
    expect(outcome(answer, "transition POST /api/posts/{id}/like")).toMatch(/no state word changed/);
    expect(outcome(answer, "transition POST /api/carts/{id}/add")).toMatch(/may repeat by design/);
    expect(outcome(answer, "transition POST /api/bills/{id}/paid")).toMatch(/without a second effect/);
    expect(outcome(answer, "transition POST /api/bookings/{id}/cancelled")).toMatch(/answers 409/);
  });

  it("reads the parent a record was created under: a step on a checkout that moves its shelf's stock", async () => {
    const answer = await probe("/api/checkouts/");
    expect(flagged(answer)).toEqual(["POST /api/checkouts/{id}/return"]);
    expect(answer.candidates[0]!.title).toMatch(/each repeat changes shelves\.in_stock again/);
  });

  it("reads the owner's account beside the record: a payment stamped once that credits it on every repeat", async () => {
    const answer = await probe("/pay");
    const payments = answer.candidates.filter((draft) => draft.location.value.endsWith("/pay"));
    expect(payments.map((draft) => draft.location.value)).toEqual(["POST /api/tickets/{id}/pay"]);
    expect(payments[0]!.title).toMatch(/each repeat changes account\.credit again/);
    expect(outcome(answer, "transition POST /api/passes/{id}/pay")).toMatch(/answers 409/);
  });

  it("flags a state check made before the write when simultaneous requests all pass it", async () => {
    const answer = await probe("/api/vouchers/");
    expect(flagged(answer)).toEqual(["POST /api/vouchers/{id}/redeemed"]);
    expect(answer.candidates[0]!.title).toMatch(/^Race: .* change points [2-6] times/);
  });

  it("flags a creation that makes two records for one Idempotency-Key sent at once, not one that keeps it unique", async () => {
    const answer = await probe("/payments");
    expect(flagged(answer)).toEqual(["POST /api/accounts/{id}/payments"]);
    expect(answer.candidates[0]!.title).toMatch(
      /^Race: .* makes [2-6] records for one idempotency-key sent at once/,
    );
    const safe = await probe("/charges");
    expect(flagged(safe)).toEqual([]);
    expect(outcome(safe, "idempotency POST /api/wallets/{id}/charges")).toMatch(/one key made one record/);
  });

  it("flags a total left stale by an update of its parts, not one the update recomputes", async () => {
    const answer = await probe("PATCH");
    expect(flagged(answer)).toEqual(["PATCH /api/invoices/{id}", "PATCH /api/orders/{id}"]);
    expect(answer.candidates.find((draft) => draft.location.value.includes("invoices"))!.title).toMatch(
      /total stale: it no longer equals the sum of lines\[\]\.quantity × unit_price/,
    );
    expect(answer.candidates.find((draft) => draft.location.value.includes("orders"))!.summary).toMatch(
      /total still 21 where the rule gives 45/,
    );
    expect(outcome(answer, "derived PATCH /api/baskets/{id}")).toMatch(/followed the update/);
  });

  it("flags an update that ignores the version it takes, not one that compares it (body or If-Match)", async () => {
    const answer = await probe("PUT");
    expect(flagged(answer)).toEqual(["PUT /api/notes/{id}"]);
    expect(outcome(answer, "version PUT /api/drafts/{id}")).toMatch(/stale version is refused \(409\)/);
    expect(outcome(answer, "version PUT /api/pages/{id}")).toMatch(/stale version is refused \(412\)/);
  });
});

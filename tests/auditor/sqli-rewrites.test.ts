import { describe, expect, it } from "vitest";
import {
  numericRewriteProof,
  orderByProof,
  stringRewriteProof,
} from "../../src/probes/auditor/sqli-rewrites.ts";
import type { PointShots, Shot } from "../../src/probes/auditor/sqli-shots.ts";

// The rewrite proofs decide on answers alone: these scripted points answer each value as SQL would, except
// that the broken twin may fail only the first time it is sent — as when another client switches the
// application's mode between two requests. Broken SQL fails every time it is sent.

/** A point whose answer to a value is `answer(value, times the value was sent before)`. */
function scriptedPoint(baseline: string, answer: (value: string, sentBefore: number) => string) {
  const sent: string[] = [];
  const shot = (label: string, value: string): Shot => ({
    label,
    value,
    prepared: {} as Shot["prepared"],
    exchange: {
      request: { method: "GET", url: "http://app.test/items", headers: {} },
      response: {
        status: 200,
        headers: {},
        body: answer(value, sent.filter((each) => each === value).length),
      },
    } as unknown as Shot["exchange"],
  });
  const body = (candidate: Shot) => candidate.exchange?.response?.body;
  const shots = {
    baselineShot: shot("baseline", baseline),
    value: baseline,
    async send(label: string, payload: string, options: { replace?: boolean } = {}) {
      const value = options.replace ? payload : `${baseline}${payload}`;
      const answered = shot(label, value);
      sent.push(value);
      return answered;
    },
    same: (a: Shot, b: Shot) => body(a) === body(b),
  };
  return { shots: shots as unknown as PointShots, sent };
}

/** `broken`'s answer: an error every time, or only on its first sending. */
const brokenAnswer = (always: boolean, sentBefore: number, otherwise: string) =>
  always || sentBefore === 0 ? "database error" : otherwise;

describe("blind rewrites: the broken twin must fail again when sent last", () => {
  // `v'||'` and `v'||*'`: no row has either name, but only the second is broken SQL.
  const stringPoint = (always: boolean) =>
    scriptedPoint("qaas-abc", (value, sentBefore) =>
      value.includes("||*") ? brokenAnswer(always, sentBefore, "no rows") : "no rows",
    );

  it("proves a string point whose broken twin fails every time, having sent it twice", async () => {
    const { shots, sent } = stringPoint(true);
    expect((await stringRewriteProof(shots, "'", "sqlite"))?.technique).toBe("blind-error");
    expect(sent.filter((value) => value === "qaas-abc'||*'")).toHaveLength(2);
  });

  it("leaves a string point alone whose broken twin failed only once", async () => {
    expect(await stringRewriteProof(stringPoint(false).shots, "'", "sqlite")).toBeUndefined();
  });

  it("does the same for numeric and sort-key rewrites", async () => {
    // id 1 is row 1, id 2 row 2; `2-1` is row 1 to SQL, `2-1-` broken SQL.
    const numericPoint = (always: boolean) =>
      scriptedPoint("1", (value, sentBefore) =>
        value.endsWith("-") ? brokenAnswer(always, sentBefore, "row 1") : value === "2" ? "row 2" : "row 1",
      ).shots;
    expect((await numericRewriteProof(numericPoint(true)))?.context).toBe("numeric");
    expect(await numericRewriteProof(numericPoint(false))).toBeUndefined();

    // `name,1` sorts like `name`; `name,9999` names no column.
    const sortPoint = (always: boolean) =>
      scriptedPoint("name", (value, sentBefore) =>
        value.endsWith(",9999") ? brokenAnswer(always, sentBefore, "sorted") : "sorted",
      ).shots;
    expect((await orderByProof(sortPoint(true)))?.context).toBe("sort key (ORDER BY)");
    expect(await orderByProof(sortPoint(false))).toBeUndefined();
  });
});

import type { BooleanPair } from "./sqli-payloads.ts";
import type { SqliProof } from "./sqli-proof.ts";
import { describeShot, sameAnswerAssertion } from "./sqli-proof.ts";
import type { PointShots } from "./sqli-shots.ts";

// Boolean differential: two values that differ only in whether an SQL condition holds (`7412>7411` vs
// `7411>7412`, the numbers stripped from every answer) answer differently, one of them exactly like the
// baseline, and both again the same way. Code that treats the value as data cannot tell the two apart.

export async function booleanProof(
  shots: PointShots,
  pairs: readonly BooleanPair[],
  context: string,
  options: { widen: boolean },
): Promise<SqliProof | undefined> {
  const base = shots.baselineShot;
  for (const pair of pairs) {
    if (pair.widens && !options.widen) continue;
    const truthy = await shots.send("condition-true", pair.truthy);
    const falsy = await shots.send("condition-false", pair.falsy);
    if (!truthy.exchange?.response || !falsy.exchange?.response || shots.same(truthy, falsy)) continue;
    if (!shots.same(truthy, base) && !shots.same(falsy, base)) continue;
    const truthyAgain = await shots.send("condition-true-again", pair.truthy);
    if (!shots.same(truthyAgain, truthy)) continue;
    const falsyAgain = await shots.send("condition-false-again", pair.falsy);
    if (!shots.same(falsyAgain, falsy)) continue;
    const widened = pair.widens && !shots.same(truthy, base) && shots.size(truthy) > shots.size(base);
    return {
      technique: "boolean",
      context,
      evidence: [truthy, falsy],
      widened,
      detail:
        `appending ${JSON.stringify(pair.truthy)} and ${JSON.stringify(pair.falsy)} gives different answers ` +
        `(${describeShot(truthy)} vs ${describeShot(falsy)}), repeatably, the ${shots.same(truthy, base) ? "true" : "false"} ` +
        `one exactly the baseline's${widened ? "; the true condition widened the answer beyond what the filter allows" : ""}`,
      assertions: [
        sameAnswerAssertion(
          truthy,
          falsy,
          "the value must be treated as data: a true and a false SQL condition must answer alike",
        ),
      ],
    };
  }
  return undefined;
}

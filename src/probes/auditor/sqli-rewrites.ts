import type { Dbms } from "./sql-signatures.ts";
import type { QuoteChar } from "./sqli-payloads.ts";
import { concatOperators, numericRewrites, ORDER_BY_TAILS, stringRewrite } from "./sqli-payloads.ts";
import type { SqliProof } from "./sqli-proof.ts";
import { describeShot, sameAnswerAssertion } from "./sqli-proof.ts";
import type { PointShots, Shot } from "./sqli-shots.ts";

// Blind injection through syntax-equivalent rewrites, for servers that hide the database error (a bare 500,
// or an empty or default answer). A rewrite means the same thing to SQL and something else to any code
// that treats the input as data: `v'||'` is `v` only inside an SQL literal, `2-1` is `1` only to SQL, a
// second sort key `,1` changes nothing only in an ORDER BY. Each is confirmed by its twin of the same
// characters that is not valid SQL (`v'|*'`, `2-1-`, `,9999`) answering differently, the same way again when
// sent last, and by a second, independent rewrite. A server that chokes on a quote for another reason (a JSON or type bug) gives the
// twins the same answer, and a server whose answer ignores the value gives every variant the baseline.

/** `v'||'` answers like `v`, `v'||*'` does not, `q'||'aas` answers like `v` too. */
export async function stringRewriteProof(
  shots: PointShots,
  quote: QuoteChar,
  dbms: Dbms | undefined,
): Promise<SqliProof | undefined> {
  const base = shots.baselineShot;
  for (const operator of concatOperators(dbms)) {
    const rewrite = stringRewrite(shots.value, quote, operator);
    const equivalent = await shots.send("equivalent-rewrite", rewrite.equivalent.slice(shots.value.length));
    if (!shots.same(equivalent, base)) continue;
    const invalid = await shots.send("invalid-twin", rewrite.invalid.slice(shots.value.length));
    if (shots.same(invalid, base) || shots.same(invalid, equivalent)) return undefined;
    const second = rewrite.split
      ? await shots.send("split-rewrite", rewrite.split, { replace: true })
      : await shots.send("equivalent-again", rewrite.equivalent.slice(shots.value.length));
    if (!shots.same(second, base)) return undefined;
    if (!(await brokenAgain(shots, invalid))) return undefined;
    return {
      technique: "blind-error",
      context: `string (${quote})`,
      dbms,
      evidence: [equivalent, invalid, second],
      detail:
        `${JSON.stringify(equivalent.value)} and ${JSON.stringify(second.value)} answer exactly like ` +
        `${JSON.stringify(shots.value)} (SQL joins the pieces back), while ${JSON.stringify(invalid.value)}, ` +
        `the same characters as broken SQL, does not (${describeShot(invalid)} vs ${describeShot(base)})`,
      assertions: [
        sameAnswerAssertion(
          equivalent,
          invalid,
          "the value must be treated as data: a string and its twin with broken SQL syntax must answer alike",
        ),
      ],
    };
  }
  return undefined;
}

/** `m-(m-n)` answers like `n` although `m` alone does not; `m-(m-n)-` answers differently. */
export async function numericRewriteProof(shots: PointShots): Promise<SqliProof | undefined> {
  const n = Number(shots.value);
  if (!/^\d{1,9}$/.test(shots.value) || !Number.isSafeInteger(n)) return undefined;
  const base = shots.baselineShot;
  // Only an answer that found something shows which number SQL computed: not-found pages tell nothing.
  const status = base.exchange?.response?.status ?? 0;
  if (status < 200 || status >= 300) return undefined;
  for (const m of [n + 1, n === 0 ? 2 : 0]) {
    const other = await shots.send("other-number", String(m), { replace: true });
    if (shots.same(other, base)) continue;
    const rewrite = numericRewrites(n, m);
    const equivalent = await shots.send("equivalent-expression", rewrite.equivalent, { replace: true });
    if (!shots.same(equivalent, base)) return undefined;
    const invalid = await shots.send("invalid-twin", rewrite.invalid, { replace: true });
    if (shots.same(invalid, base) || shots.same(invalid, equivalent)) return undefined;
    const second = await shots.send("subquery-expression", rewrite.subquery, { replace: true });
    if (!shots.same(second, base)) return undefined;
    if (!(await brokenAgain(shots, invalid))) return undefined;
    return {
      technique: "blind-error",
      context: "numeric",
      evidence: [equivalent, invalid, other, second],
      detail:
        `${JSON.stringify(equivalent.value)} and ${JSON.stringify(second.value)} answer exactly like ${n} ` +
        `although ${m} alone answers differently (${describeShot(other)} vs ${describeShot(base)}): the value ` +
        `is computed by SQL; ${JSON.stringify(invalid.value)} (broken SQL) answers ${describeShot(invalid)}`,
      assertions: [
        sameAnswerAssertion(
          equivalent,
          invalid,
          "the value must be treated as data: an arithmetic expression and its broken twin must answer alike",
        ),
      ],
    };
  }
  return undefined;
}

/** `v,1` answers like `v`, `v,9999` does not, `v,(SELECT 1)` does: the value is an ORDER BY term. */
export async function orderByProof(shots: PointShots): Promise<SqliProof | undefined> {
  const base = shots.baselineShot;
  const equivalent = await shots.send("second-sort-key", ORDER_BY_TAILS.equivalent);
  if (!shots.same(equivalent, base)) return undefined;
  const invalid = await shots.send("missing-sort-column", ORDER_BY_TAILS.invalid);
  if (shots.same(invalid, base) || shots.same(invalid, equivalent)) return undefined;
  const second = await shots.send("subquery-sort-key", ORDER_BY_TAILS.subquery);
  if (!shots.same(second, base)) return undefined;
  if (!(await brokenAgain(shots, invalid))) return undefined;
  return {
    technique: "blind-error",
    context: "sort key (ORDER BY)",
    evidence: [equivalent, invalid, second],
    detail:
      `${JSON.stringify(equivalent.value)} and ${JSON.stringify(second.value)} (a second sort key) answer ` +
      `exactly like ${JSON.stringify(shots.value)}, while ${JSON.stringify(invalid.value)} (a column ` +
      `position that does not exist) answers ${describeShot(invalid)}`,
    assertions: [
      sameAnswerAssertion(
        equivalent,
        invalid,
        "the sort key must be checked against a fixed list: two unknown keys must answer alike",
      ),
    ],
  };
}

/**
 * The broken twin sent once more, last, answers as it did the first time and still unlike the baseline: a
 * target whose state changed between the shots (a mode another client switched, a record gone) makes one
 * differing answer that does not repeat, where broken SQL fails every time.
 */
async function brokenAgain(shots: PointShots, invalid: Shot): Promise<boolean> {
  const again = await shots.send(`${invalid.label}-again`, invalid.value, { replace: true });
  return shots.same(again, invalid) && !shots.same(again, shots.baselineShot);
}

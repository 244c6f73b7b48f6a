import { SQL_ERROR } from "./sql-signatures.ts";
import type { SqliProof } from "./sqli-proof.ts";
import type { PointShots, Shot } from "./sqli-shots.ts";

// Error-based: a quote breaks the SQL text and the database's own syntax error comes back in the answer (the
// page, a JSON message, a GraphQL error). Only a syntax error counts: "no such column" is also what a safely
// quoted identifier answers to a name that does not exist. Confirmed by the same error again and by a syntactically valid
// variant of the same value — the doubled quote, a bare number, a second sort key — that raises none, so a
// page that always shows an error, or shows one a concurrent request caused, is not taken for injection.

export async function errorBased(
  shots: PointShots,
  broken: Shot,
  quote: string,
): Promise<SqliProof | undefined> {
  const error = shots.sqlError(broken);
  if (error?.kind !== "syntax" || shots.sqlError(shots.baselineShot)) return undefined;
  const again = await shots.send(`${broken.label}-again`, broken.value.slice(shots.value.length));
  if (shots.sqlError(again)?.kind !== "syntax") return undefined;
  const valid = await firstValidVariant(shots, quote);
  if (!valid) return undefined;
  const name = quote === "'" ? "single quote" : quote === '"' ? "double quote" : JSON.stringify(quote);
  return {
    technique: "error-based",
    context: valid.context,
    dbms: error.dbms,
    evidence: [broken, valid.shot],
    detail: `a ${name} produced a database error (${error.text}), twice, that ${JSON.stringify(valid.shot.value)} does not`,
    assertions: [
      {
        kind: "body_not_matches",
        step: broken.label,
        pattern: SQL_ERROR.source,
        flags: "i",
        message: "input must never reach the SQL text (database error in the answer)",
      },
      {
        kind: "status_below",
        step: broken.label,
        value: 500,
        message: "a quote in the input must not break the query",
      },
    ],
  };
}

/** The first variant that is valid SQL in some context and answers without an error: the value is in SQL text. */
async function firstValidVariant(
  shots: PointShots,
  quote: string,
): Promise<{ shot: Shot; context: string } | undefined> {
  const numeric = /^-?\d+$/.test(shots.value);
  const variants: Array<{ label: string; payload: string; context: string }> = [
    {
      label: quote === "'" ? "doubled-quote" : "doubled-double-quote",
      payload: `${quote}${quote}`,
      context: `string (${quote})`,
    },
    // A quoted identifier (`"name"`): joined to itself it is still valid, whatever the column's type.
    ...(quote === '"'
      ? [{ label: "identifier-expression", payload: `"||''||"${shots.value}`, context: 'identifier (")' }]
      : []),
    ...(numeric ? [{ label: "numeric-expression", payload: "-0", context: "numeric" }] : []),
    { label: "second-sort-key", payload: ",1", context: "sort key (ORDER BY)" },
  ];
  for (const { label, payload, context } of variants) {
    const shot = await shots.send(label, payload);
    if (!shots.failed(shot)) return { shot, context };
  }
  return undefined;
}

import fc from "fast-check";

export interface MinimalFailure<Value> {
  /** The first failing value found. */
  original: Value;
  /** The smallest failing value fast-check's shrinking reached within the check budget. */
  minimal: Value;
  /** How many times `fails` was called (each call is typically one request). */
  checks: number;
  shrinks: number;
}

export interface SearchOptions {
  runs: number;
  /** Cap on calls to `fails`, generation and shrinking together; past it every value counts as passing. */
  maxChecks: number;
  seed?: number;
}

/**
 * Property-based search: draws values from `arbitrary` until `fails` says one fails, then lets fast-check
 * shrink it to a minimal failing case. Bounded by `maxChecks`, so a probe never spends more than that.
 */
export async function findMinimalFailure<Value>(
  arbitrary: fc.Arbitrary<Value>,
  fails: (value: Value) => Promise<boolean>,
  options: SearchOptions,
): Promise<MinimalFailure<Value> | undefined> {
  let checks = 0;
  let original: { value: Value } | undefined;
  let lastFailing: { value: Value } | undefined;
  const property = fc.asyncProperty(arbitrary, async (value) => {
    if (checks >= options.maxChecks) return true;
    checks += 1;
    const failed = await fails(value);
    if (failed) {
      original ??= { value };
      lastFailing = { value };
    }
    return !failed;
  });
  const details = await fc.check(property, {
    numRuns: options.runs,
    seed: options.seed ?? 42,
    endOnFailure: false,
  });
  if (!original || !lastFailing) return undefined;
  const minimal =
    details.failed && details.counterexample ? (details.counterexample[0] as Value) : lastFailing.value;
  return { original: original.value, minimal, checks, shrinks: details.numShrinks };
}

/**
 * Greedy one-key-at-a-time minimisation of an object that triggers a failure: drops each key not in `keep`
 * while the failure persists. Used for deterministic edge cases, where the failing field is known.
 */
export async function minimizeObject(
  value: Record<string, unknown>,
  keep: ReadonlySet<string>,
  fails: (candidate: Record<string, unknown>) => Promise<boolean>,
  maxChecks: number,
): Promise<{ minimal: Record<string, unknown>; checks: number }> {
  let current = { ...value };
  let checks = 0;
  for (const key of Object.keys(value)) {
    if (keep.has(key) || checks >= maxChecks) continue;
    const { [key]: _dropped, ...candidate } = current;
    checks += 1;
    if (await fails(candidate)) current = candidate;
  }
  return { minimal: current, checks };
}

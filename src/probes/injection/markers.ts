import { randomBytes, randomInt } from "node:crypto";

// Markers whose proof is computed by the target, never merely echoed: the request carries `7411*313` and
// only an interpreter that ran it can answer `2319643`. Random operands keep two probes (and a value the
// page already shows) from ever producing the same number.

/** A short unique tag (`qaas3f9a1c2e`): letters and digits only, so no encoding layer changes it. */
export function uniqueToken(): string {
  return `qaas${randomBytes(4).toString("hex")}`;
}

export interface Arithmetic {
  left: number;
  right: number;
  /** The result as the answer would show it. */
  sum: string;
  product: string;
}

/** Two operands whose sum and product are at least six digits and never a substring of either operand. */
export function arithmetic(): Arithmetic {
  for (;;) {
    const left = randomInt(1000, 9999);
    const right = randomInt(101, 999);
    const sum = String(left + right);
    const product = String(left * right);
    const operands = `${left} ${right}`;
    if (!operands.includes(sum) && !operands.includes(product)) return { left, right, sum, product };
  }
}

// What a failed request says about the target: a refused or reset connection means the process may be
// gone; a timeout means it is slow or hung, which is another matter.

/** How a request failed to reach the target, when the failure says the connection itself was lost. */
export type ConnectionLoss = "refused" | "reset";

const RESET_CODES = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CLOSED", "ECONNABORTED"]);

/** Classifies a fetch error: `refused` (nothing listens), `reset` (the peer closed mid-exchange), else undefined. */
export function connectionLossOf(error: unknown): ConnectionLoss | undefined {
  for (let current = error, depth = 0; current && depth < 4; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (code === "ECONNREFUSED") return "refused";
    if (typeof code === "string" && RESET_CODES.has(code)) return "reset";
    const nested = (current as { errors?: unknown[] }).errors;
    if (Array.isArray(nested)) {
      const losses = nested.map(connectionLossOf);
      if (losses.includes("refused")) return "refused";
      if (losses.includes("reset")) return "reset";
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

export type Reachability = "up" | "refused" | "no-answer";

/** One plain request to `url`: did anything answer (any status), was the connection refused, or no answer in time. */
export async function reachability(url: string, timeoutMs = 2000): Promise<Reachability> {
  try {
    const response = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(timeoutMs) });
    await response.arrayBuffer().catch(() => undefined);
    return "up";
  } catch (error) {
    return connectionLossOf(error) ? "refused" : "no-answer";
  }
}

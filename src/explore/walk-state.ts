import type { ExploreFinding, StepStatus } from "./run-file.ts";
import type { StepCaller } from "./step-caller.ts";
import type { StepCode } from "./step-codes.ts";
import { codeOfToolError } from "./step-outcome.ts";

// What the walker's moves share: the state of the walk, the outcome a move answers, and the small helpers
// every move needs (resolve one element, take evidence, turn a tool error into a step code).

/** What one move answers; the walker numbers it, writes it and attaches the repro to its finding. */
export interface MoveOutcome {
  status: StepStatus;
  code?: StepCode;
  detail?: string;
  finding?: Omit<ExploreFinding, "step" | "repro">;
}

/** What moves share while the walk goes on: the caller, the persona and where the tab is. */
export interface WalkState {
  call: StepCaller;
  persona: string;
  entry: string;
  /** The URL the tab shows, as the last navigate or act answered it. */
  url: string | undefined;
  /** Why the target could not be reached, while it cannot: moves after that are blocked, not attempted. */
  unreachable?: string;
}

export type LocatorSpec = { role?: string; name?: string; text?: string; exact?: boolean };

/**
 * Resolves a locator to one element. Several matches are narrowed once (exact name); several that still
 * carry the same name are one control repeated (a header and a footer link), so the first is used. Several
 * different ones are ambiguous: guessing would test the wrong thing.
 */
export async function findOne(
  state: WalkState,
  spec: LocatorSpec,
): Promise<{ found: LocatorSpec; why?: undefined } | { found?: undefined; why: string }> {
  for (const attempt of [spec, { ...spec, exact: true }]) {
    const located = await state.call("locate", { target: attempt });
    if (!located.ok) return { why: located.error };
    const { count, elements } = located.data as {
      count: number;
      elements: Array<{ name: string; visible: boolean }>;
    };
    if (count === 0) {
      if (attempt === spec)
        return { why: `no ${spec.role ?? "element"} named "${spec.name ?? spec.text}" on ${state.url}` };
      continue;
    }
    const names = new Set(elements.map((element) => element.name.toLowerCase()));
    if (count === 1 || names.size === 1) return { found: attempt };
  }
  return { why: `ambiguous: several different ${spec.role ?? "element"}s match "${spec.name ?? spec.text}"` };
}

/** A screenshot of the page as it is now; none when the tab cannot take one (the finding then fails the contract). */
export async function evidence(state: WalkState, label: string): Promise<ExploreFinding["evidence"]> {
  const shot = await state.call("screenshot", { label });
  if (!shot.ok) return [];
  return [{ kind: "screenshot", path: (shot.data as { artifact: string }).artifact }];
}

export function screenOf(state: WalkState): string {
  if (!state.url) return state.entry;
  try {
    return new URL(state.url).pathname;
  } catch {
    return state.url;
  }
}

export function blocked(error: string): MoveOutcome {
  const code = codeOfToolError(error);
  return { status: code ? "blocked" : "failed", ...(code ? { code } : {}), detail: error };
}

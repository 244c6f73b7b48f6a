/**
 * A string of exactly `length` characters for length checks: letters parted by spaces (`q q q…q`), never
 * one long run of a single kind of character. A run of letters that fails a pattern at its end is the very
 * input that makes a backtracking pattern (an email or URL check with nested repetition) take exponential
 * time: sent as a mere length check, it could stall the target for minutes. Spaces end each run at once,
 * and the value neither starts nor ends with one, so trimming leaves its length alone.
 */
export function longText(length: number): string {
  if (length <= 0) return "";
  const text = "q ".repeat(Math.ceil(length / 2)).slice(0, length);
  return text.endsWith(" ") ? `${text.slice(0, -1)}q` : text;
}

// What a documented `pattern` says about backtracking: a group that repeats something already repeated
// (`([a-z0-9]+\.?)+`, `(\d+[ -]?)*`) can match a run of its characters in exponentially many ways, the shape
// behind most ReDoS reports. Read from the pattern's text (groups, classes, escapes, quantifiers) without
// compiling it; the character a probe repeats is one the inner repetition accepts.

export interface NestedRepetition {
  /** A character the inner repetition accepts: what the attack's run is made of. */
  letter: string;
}

type Accepts = (letter: string) => boolean;

interface OpenGroup {
  /** A character of each repetition inside the group (at any depth). */
  repeated: string[];
  /** A character of the group's first atom. */
  first?: string;
  /** Atoms the group cannot match without (no `?`, `*` or `{0,}`): a run splits across steps only if each takes it. */
  mandatory: Accepts[];
  atoms: Accepts[];
  alternation: boolean;
}

/** The first group of `pattern` that repeats an inner repetition, with a character it accepts; else undefined. */
export function nestedRepetition(pattern: string): NestedRepetition | undefined {
  const open: OpenGroup[] = [];
  let index = 0;
  while (index < pattern.length) {
    const char = pattern[index]!;
    if (char === "(") {
      open.push({ repeated: [], mandatory: [], atoms: [], alternation: false });
      // Non-capturing and named groups and lookarounds: their prefix is not an atom.
      const prefix = /^\((\?(?:[:=!]|<[=!]|<[^>]*>|P<[^>]*>))?/.exec(pattern.slice(index))!;
      index += prefix[0].length;
      continue;
    }
    if (char === ")") {
      const group = open.pop() ?? { repeated: [], mandatory: [], atoms: [], alternation: false };
      const after = quantifierAt(pattern, index + 1);
      index += 1 + (after?.length ?? 0);
      const accepts: Accepts = group.alternation
        ? (letter) => group.atoms.some((atom) => atom(letter))
        : (letter) => group.mandatory.every((atom) => atom(letter));
      // A run of one character splits across the steps only when every step can be made of it (`(_[a-z]+)*`
      // needs a `_` each time); a letter or digit over punctuation where several would do.
      const runs = group.repeated.filter(accepts);
      const letter = runs.find((candidate) => /[a-zA-Z0-9]/.test(candidate)) ?? runs[0];
      if (after?.unbounded && letter) return { letter };
      // The group as an atom of the one around it: repeated itself, or holding a repetition.
      const repeated = after?.unbounded && group.first ? [group.first] : group.repeated;
      noteAtom(open, group.first, repeated, accepts, after);
      continue;
    }
    let letter: string | undefined;
    const start = index;
    if (char === "\\") {
      letter = escapeLetter(pattern[index + 1] ?? "");
      index += 2;
    } else if (char === "[") {
      const end = classEnd(pattern, index);
      letter = classLetter(pattern.slice(index + 1, end));
      index = end + 1;
    } else {
      index += 1;
      if (char === "|") {
        const innermost = open.at(-1);
        if (innermost) innermost.alternation = true;
      }
      if (char === "|" || char === "^" || char === "$") continue;
      letter = /[\w@.:/+-]/.test(char) ? char : undefined;
    }
    const after = quantifierAt(pattern, index);
    index += after?.length ?? 0;
    noteAtom(
      open,
      letter,
      after?.unbounded && letter ? [letter] : [],
      atomTester(pattern.slice(start, index - (after?.length ?? 0))),
      after,
    );
  }
  return undefined;
}

function noteAtom(
  open: OpenGroup[],
  first: string | undefined,
  repeated: readonly string[],
  accepts: Accepts,
  quantifier: { optional: boolean } | undefined,
): void {
  const innermost = open.at(-1);
  if (!innermost) return;
  innermost.first ??= first;
  innermost.repeated.push(...repeated);
  innermost.atoms.push(accepts);
  if (!quantifier?.optional) innermost.mandatory.push(accepts);
}

/** Whether one atom (a class, an escape, a literal) matches a character; unknown syntax accepts anything. */
function atomTester(atom: string): Accepts {
  try {
    const expression = new RegExp(`^(?:${atom})$`);
    return (letter) => expression.test(letter);
  } catch {
    return () => true;
  }
}

/** The quantifier at `index` (`+`, `*`, `?`, `{n}`, `{n,}`, `{n,m}`, maybe lazy or possessive), and whether it is unbounded. */
function quantifierAt(
  pattern: string,
  index: number,
): { length: number; unbounded: boolean; optional: boolean } | undefined {
  const match = /^(?:[+*?]|\{(\d+)(?:(,)(\d*))?\})[?+]?/.exec(pattern.slice(index));
  if (!match) return undefined;
  const token = match[0];
  const unbounded = token[0] === "+" || token[0] === "*" || (match[2] === "," && match[3] === "");
  const optional = token[0] === "?" || token[0] === "*" || match[1] === "0";
  return { length: token.length, unbounded, optional };
}

/** The index of the `]` that closes the class opened at `start`. */
function classEnd(pattern: string, start: number): number {
  let index = start + 1;
  if (pattern[index] === "^") index += 1;
  if (pattern[index] === "]") index += 1;
  while (index < pattern.length && pattern[index] !== "]") index += pattern[index] === "\\" ? 2 : 1;
  return index;
}

const ESCAPE_LETTERS: Record<string, string> = { d: "1", w: "a", s: " " };

function escapeLetter(escaped: string): string | undefined {
  if (escaped in ESCAPE_LETTERS) return ESCAPE_LETTERS[escaped];
  // \D, \W, \S and the like: any letter the class excludes is unknown here.
  return /[A-Za-z]/.test(escaped) ? undefined : escaped;
}

/** A character the class accepts: a letter or digit it names first, else its first member. */
function classLetter(body: string): string | undefined {
  if (body.startsWith("^")) return undefined;
  const word = /(?:^|[^\\])([a-zA-Z0-9])/.exec(body)?.[1];
  if (word) return word;
  const shorthand = /\\([dws])/.exec(body)?.[1];
  if (shorthand) return ESCAPE_LETTERS[shorthand];
  return body[0] === "\\" ? body[1] : body[0];
}

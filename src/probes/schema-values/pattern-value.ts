// A string matching a (simple) regular expression, for `pattern` schemas: classes, escapes, literals,
// groups, alternation (first branch) and quantifiers, each repeated its minimum number of times (once
// for `+`). Anything it cannot express yields undefined, and the caller falls back to candidates.

const CLASS_SAMPLES: Record<string, string> = { d: "7", w: "q", s: " ", D: "q", W: "-", S: "q" };

function pickFromClass(body: string): string | undefined {
  const negated = body.startsWith("^");
  const content = negated ? body.slice(1) : body;
  if (negated) {
    for (const candidate of ["q", "7", "Q", "-", "_"])
      if (!new RegExp(`[${content}]`).test(candidate)) return candidate;
    return undefined;
  }
  const shorthand = content.match(/^\\([dwsDWS])/);
  if (shorthand) return CLASS_SAMPLES[shorthand[1]!];
  const range = content.match(/^(\\?.)-(\\?.)/);
  if (range) {
    const start = range[1]!.replace(/^\\/, "");
    // Prefer a letter or digit inside the range that reads naturally.
    for (const candidate of ["q", "a", "7", "1", "Q", "A"])
      if (candidate >= start && candidate <= range[2]!.replace(/^\\/, "")) return candidate;
    return start;
  }
  const first = content.replace(/^\\/, "")[0];
  return first;
}

export function stringForPattern(pattern: string): string | undefined {
  let source = pattern;
  if (source.startsWith("^")) source = source.slice(1);
  if (source.endsWith("$") && !source.endsWith("\\$")) source = source.slice(0, -1);
  try {
    const result = generate(source);
    return result !== undefined && new RegExp(pattern, "u").test(result) ? result : undefined;
  } catch {
    return undefined;
  }
}

function generate(source: string): string | undefined {
  // Top-level alternation: the first branch.
  let depth = 0;
  for (let index = 0; index < source.length; index += 1) {
    const character = source[index];
    if (character === "\\") index += 1;
    else if (character === "(" || character === "[") depth += 1;
    else if (character === ")" || character === "]") depth -= 1;
    else if (character === "|" && depth === 0) return generate(source.slice(0, index));
  }
  let output = "";
  let index = 0;
  while (index < source.length) {
    let atom: string | undefined;
    const character = source[index]!;
    if (character === "\\") {
      const next = source[index + 1] ?? "";
      atom = CLASS_SAMPLES[next] ?? next;
      index += 2;
    } else if (character === "[") {
      let end = index + 1;
      while (end < source.length && source[end] !== "]") end += source[end] === "\\" ? 2 : 1;
      atom = pickFromClass(source.slice(index + 1, end));
      index = end + 1;
    } else if (character === "(") {
      let level = 1;
      let end = index + 1;
      while (end < source.length && level > 0) {
        if (source[end] === "\\") end += 1;
        else if (source[end] === "(") level += 1;
        else if (source[end] === ")") level -= 1;
        end += 1;
      }
      atom = generate(source.slice(index + 1, end - 1).replace(/^\?(:|=|!|<[^>]*>)/, ""));
      index = end;
    } else if (character === ".") {
      atom = "q";
      index += 1;
    } else {
      atom = character;
      index += 1;
    }
    if (atom === undefined) return undefined;
    let times = 1;
    const quantifier = source.slice(index).match(/^(\{(\d+)(?:,(\d*))?\}|[*+?])\??/);
    if (quantifier) {
      if (quantifier[1] === "*" || quantifier[1] === "?") times = 0;
      else if (quantifier[1] === "+") times = 1;
      else times = Number(quantifier[2]);
      index += quantifier[0].length;
    }
    output += atom.repeat(times);
  }
  return output;
}

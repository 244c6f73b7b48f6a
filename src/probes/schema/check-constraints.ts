// SQLite keeps CHECK constraints only in the CREATE TABLE text; PostgreSQL prints them as `CHECK ((…))`.
// Both come down to the expression inside, read with quotes and nesting respected.

/** The expressions of every `CHECK (…)` in a CREATE TABLE statement, column-level and table-level. */
export function checkConstraintsFromSql(sql: string): string[] {
  const checks: string[] = [];
  let index = 0;
  while (index < sql.length) {
    const character = sql[index] as string;
    if (character === "'" || character === '"' || character === "`" || character === "[") {
      index = skipQuoted(sql, index);
      continue;
    }
    if (character === "-" && sql[index + 1] === "-") {
      const end = sql.indexOf("\n", index);
      index = end === -1 ? sql.length : end;
      continue;
    }
    if (character === "/" && sql[index + 1] === "*") {
      const end = sql.indexOf("*/", index + 2);
      index = end === -1 ? sql.length : end + 2;
      continue;
    }
    if (/^check\b/i.test(sql.slice(index, index + 6)) && !/[\w$]/.test(sql[index - 1] ?? " ")) {
      let open = index + 5;
      while (open < sql.length && /\s/.test(sql[open] as string)) open += 1;
      if (sql[open] === "(") {
        const close = matchingParenthesis(sql, open);
        if (close !== -1) {
          checks.push(
            sql
              .slice(open + 1, close)
              .replace(/\s+/g, " ")
              .trim(),
          );
          index = close + 1;
          continue;
        }
      }
    }
    index += 1;
  }
  return checks;
}

/** `CHECK ((price >= 0)) NOT VALID` → `price >= 0`. */
export function checkExpressionFromDefinition(definition: string): string {
  const body = definition
    .replace(/^\s*CHECK\s*/i, "")
    .replace(/\s+NOT\s+VALID\s*$/i, "")
    .trim();
  return stripOuterParentheses(body);
}

export function stripOuterParentheses(expression: string): string {
  let current = expression.trim();
  while (current.startsWith("(") && matchingParenthesis(current, 0) === current.length - 1) {
    current = current.slice(1, -1).trim();
  }
  return current;
}

function matchingParenthesis(text: string, open: number): number {
  let depth = 0;
  for (let index = open; index < text.length; index += 1) {
    const character = text[index];
    if (character === "'" || character === '"') {
      index = skipQuoted(text, index) - 1;
      continue;
    }
    if (character === "(") depth += 1;
    if (character === ")") {
      depth -= 1;
      if (depth === 0) return index;
    }
  }
  return -1;
}

/** The index just past a quoted token; a doubled quote inside is an escaped quote. */
function skipQuoted(text: string, start: number): number {
  const quote = text[start] === "[" ? "]" : (text[start] as string);
  let index = start + 1;
  while (index < text.length) {
    if (text[index] === quote) {
      if (text[index + 1] === quote && quote !== "]") {
        index += 2;
        continue;
      }
      return index + 1;
    }
    index += 1;
  }
  return text.length;
}

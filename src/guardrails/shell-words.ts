// Reads a shell command line the way a POSIX shell would split it into simple commands, so the
// guardrails judge the programs that would run rather than substrings: `echo "git merge"` runs echo,
// while `git -C repo merge x` and `a && $(git merge x)` run git merge. Quotes and escapes are removed,
// redirections are set aside, and the bodies of command substitutions are returned to be judged too.
// It does not expand variables: a word that depends on one is marked dynamic.

export interface ShellCommand {
  /** The words of the command, quotes and escapes removed; redirection targets excluded. */
  argv: string[];
  /** Parallel to argv: whether the word depends on an expansion whose value is only known at run time. */
  dynamic: boolean[];
  /** Files named by redirections (`> out`, `< in`, `2>> log`). */
  redirects: string[];
  /** Bodies of `$(...)`, backquote and `<(...)` substitutions in this command's words: they run too. */
  substitutions: string[];
  /** Here-document bodies (`<<EOF … EOF`) and here-strings (`<<< text`) fed to the command's standard input. */
  heredocs: string[];
  /** Commands joined by `|` share a pipeline number. */
  pipeline: number;
}

interface PendingHeredoc {
  delimiter: string;
  quoted: boolean;
  stripTabs: boolean;
  owner: ShellCommand;
}

interface WordBuilder {
  text: string;
  dynamic: boolean;
  quoted: boolean;
  redirect: boolean;
  heredoc: HeredocOperator | undefined;
}

type HeredocOperator = "<<" | "<<-" | "<<<";

export function parseShell(source: string): ShellCommand[] {
  const commands: ShellCommand[] = [];
  let pipeline = 0;
  let current = emptyCommand(pipeline);
  let word: WordBuilder | undefined;
  let redirectNext = false;
  let heredocNext: HeredocOperator | undefined;
  let pendingHeredocs: PendingHeredoc[] = [];
  let index = 0;

  const startWord = (): WordBuilder => {
    if (word === undefined) {
      word = { text: "", dynamic: false, quoted: false, redirect: redirectNext, heredoc: heredocNext };
      redirectNext = false;
      heredocNext = undefined;
    }
    return word;
  };
  const endWord = () => {
    if (word === undefined) return;
    if (word.heredoc === "<<<") current.heredocs.push(word.text);
    else if (word.heredoc !== undefined) {
      pendingHeredocs.push({
        delimiter: word.text,
        quoted: word.quoted,
        stripTabs: word.heredoc === "<<-",
        owner: current,
      });
    } else if (word.redirect) current.redirects.push(word.text);
    else {
      current.argv.push(word.text);
      current.dynamic.push(word.dynamic);
    }
    word = undefined;
  };
  const endCommand = (samePipeline: boolean) => {
    endWord();
    redirectNext = false;
    heredocNext = undefined;
    const used = current.argv.length + current.redirects.length + current.substitutions.length > 0;
    if (used) commands.push(current);
    if (!samePipeline) pipeline += 1;
    current = emptyCommand(pipeline);
  };
  const substitute = (body: string, text: string) => {
    const builder = startWord();
    builder.dynamic = true;
    builder.text += text;
    current.substitutions.push(body);
  };
  // `$...` at `at` (inside double quotes or not); answers the index after it.
  const readDollar = (at: number): number => {
    const next = source[at + 1];
    if (next === "(" && source[at + 2] === "(") {
      const end = matchingParenthesis(source, at + 3);
      const body = source.slice(at + 3, end);
      const builder = startWord();
      builder.dynamic = true;
      builder.text += `$((${body}))`;
      return Math.min(end + 2, source.length);
    }
    if (next === "(") {
      const end = matchingParenthesis(source, at + 2);
      const body = source.slice(at + 2, end);
      substitute(body, `$(${body})`);
      return end + 1;
    }
    if (next === "{") {
      const close = source.indexOf("}", at + 2);
      const end = close === -1 ? source.length : close;
      const body = source.slice(at + 2, end);
      const builder = startWord();
      builder.dynamic = true;
      builder.text += `\${${body}}`;
      // `${x:-$(command)}` runs the command; judging the body as a line of its own finds it.
      if (body.includes("$(") || body.includes("`")) current.substitutions.push(body);
      return end + 1;
    }
    if (next === "'") {
      const [text, end] = readAnsiQuoted(source, at + 2);
      const builder = startWord();
      builder.quoted = true;
      builder.text += text;
      return end;
    }
    const name = /^(?:[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])/.exec(source.slice(at + 1));
    const builder = startWord();
    if (name === null) {
      builder.text += "$";
      return at + 1;
    }
    builder.dynamic = true;
    builder.text += `$${name[0]}`;
    return at + 1 + name[0].length;
  };
  const readBackquoted = (at: number): number => {
    let end = at + 1;
    let body = "";
    while (end < source.length && source[end] !== "`") {
      if (source[end] === "\\" && end + 1 < source.length) {
        body += source[end + 1];
        end += 2;
      } else {
        body += source[end];
        end += 1;
      }
    }
    substitute(body, `\`${body}\``);
    return end + 1;
  };
  const readDoubleQuoted = (at: number): number => {
    const builder = startWord();
    builder.quoted = true;
    let position = at;
    while (position < source.length && source[position] !== '"') {
      const char = source[position]!;
      if (char === "\\" && position + 1 < source.length) {
        const escaped = source[position + 1]!;
        if (escaped === "\n") {
          position += 2;
          continue;
        }
        startWord().text += '$`"\\'.includes(escaped) ? escaped : `\\${escaped}`;
        position += 2;
      } else if (char === "$") {
        position = readDollar(position);
      } else if (char === "`") {
        position = readBackquoted(position);
      } else {
        startWord().text += char;
        position += 1;
      }
    }
    return position + 1;
  };

  while (index < source.length) {
    const char = source[index]!;
    const next = source[index + 1];
    if (char === "\\") {
      if (next !== undefined && next !== "\n") startWord().text += next;
      index += 2;
    } else if (char === "'") {
      const close = source.indexOf("'", index + 1);
      const end = close === -1 ? source.length : close;
      const builder = startWord();
      builder.quoted = true;
      builder.text += source.slice(index + 1, end);
      index = end + 1;
    } else if (char === '"') {
      index = readDoubleQuoted(index + 1);
    } else if (char === "$") {
      index = readDollar(index);
    } else if (char === "`") {
      index = readBackquoted(index);
    } else if (char === " " || char === "\t" || char === "\r") {
      endWord();
      index += 1;
    } else if (char === "#" && word === undefined) {
      const newline = source.indexOf("\n", index);
      index = newline === -1 ? source.length : newline;
    } else if (char === "\n") {
      endCommand(false);
      index = readHeredocs(source, index + 1, pendingHeredocs);
      pendingHeredocs = [];
    } else if (char === ";") {
      endCommand(false);
      index += 1;
    } else if (char === "&" && next === "&") {
      endCommand(false);
      index += 2;
    } else if (char === "&" && next === ">") {
      endWord();
      index += source[index + 2] === ">" ? 3 : 2;
      redirectNext = true;
    } else if (char === "&") {
      endCommand(false);
      index += 1;
    } else if (char === "|" && next === "|") {
      endCommand(false);
      index += 2;
    } else if (char === "|") {
      endCommand(true);
      index += next === "&" ? 2 : 1;
    } else if ((char === "<" || char === ">") && next === "(") {
      const end = matchingParenthesis(source, index + 2);
      const body = source.slice(index + 2, end);
      substitute(body, `${char}(${body})`);
      index = end + 1;
    } else if (char === "<" || char === ">") {
      // Digits written right before the operator (`2>`) are a file descriptor, not an argument.
      if (word !== undefined && !word.quoted && /^\d+$/.test(word.text)) word = undefined;
      else endWord();
      const start = index;
      index += 1;
      while (index < source.length && "<>&|-".includes(source[index]!)) index += 1;
      const operator = source.slice(start, index);
      // The word after `<<` names the line that ends a here-document; its body follows the next newline.
      if (operator === "<<" || operator === "<<-" || operator === "<<<") heredocNext = operator;
      redirectNext = true;
    } else if (char === "(" || char === ")") {
      endCommand(false);
      index += 1;
    } else {
      startWord().text += char;
      index += 1;
    }
  }
  endCommand(false);
  return commands;
}

function emptyCommand(pipeline: number): ShellCommand {
  return { argv: [], dynamic: [], redirects: [], substitutions: [], heredocs: [], pipeline };
}

/**
 * Consumes the bodies of the here-documents opened on the line that just ended, from `start`; answers
 * where the next command begins. The body is data for its command, not commands of this line — but an
 * unquoted delimiter lets `$(…)` in it run, so those substitutions are kept.
 */
function readHeredocs(source: string, start: number, pending: PendingHeredoc[]): number {
  let position = start;
  for (const heredoc of pending) {
    let body = "";
    while (position < source.length) {
      const newline = source.indexOf("\n", position);
      const end = newline === -1 ? source.length : newline;
      const line = source.slice(position, end);
      position = end + 1;
      if ((heredoc.stripTabs ? line.replace(/^\t+/, "") : line) === heredoc.delimiter) break;
      body += `${line}\n`;
    }
    heredoc.owner.heredocs.push(body);
    if (!heredoc.quoted) heredoc.owner.substitutions.push(...substitutionsIn(body));
  }
  return Math.min(position, source.length);
}

/** The bodies of `$(…)` and backquote substitutions in expanding text (a here-document). */
function substitutionsIn(text: string): string[] {
  const found: string[] = [];
  let index = 0;
  while (index < text.length) {
    if (text[index] === "\\") index += 2;
    else if (text.startsWith("$(", index) && text[index + 2] !== "(") {
      const end = matchingParenthesis(text, index + 2);
      found.push(text.slice(index + 2, end));
      index = end + 1;
    } else if (text[index] === "`") {
      const close = text.indexOf("`", index + 1);
      const end = close === -1 ? text.length : close;
      found.push(text.slice(index + 1, end));
      index = end + 1;
    } else index += 1;
  }
  return found;
}

/** Index of the `)` closing a group opened just before `start`, skipping quoted text (or the end). */
function matchingParenthesis(source: string, start: number): number {
  let depth = 1;
  let index = start;
  while (index < source.length) {
    const char = source[index]!;
    if (char === "\\") index += 2;
    else if (char === "'") {
      const close = source.indexOf("'", index + 1);
      index = close === -1 ? source.length : close + 1;
    } else if (char === '"') {
      index += 1;
      while (index < source.length && source[index] !== '"') index += source[index] === "\\" ? 2 : 1;
      index += 1;
    } else {
      if (char === "(") depth += 1;
      if (char === ")") depth -= 1;
      if (depth === 0) return index;
      index += 1;
    }
  }
  return source.length;
}

const ANSI_ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", '"': '"' };

/** `$'...'` text from `start` (after the quote): answers the text and the index after the closing quote. */
function readAnsiQuoted(source: string, start: number): [string, number] {
  let text = "";
  let index = start;
  while (index < source.length && source[index] !== "'") {
    if (source[index] === "\\" && index + 1 < source.length) {
      const escaped = source[index + 1]!;
      const hex = escaped === "x" ? /^[0-9a-fA-F]{1,2}/.exec(source.slice(index + 2)) : null;
      if (hex !== null) {
        text += String.fromCharCode(Number.parseInt(hex[0], 16));
        index += 2 + hex[0].length;
        continue;
      }
      text += ANSI_ESCAPES[escaped] ?? escaped;
      index += 2;
    } else {
      text += source[index];
      index += 1;
    }
  }
  return [text, index + 1];
}

/** The words of a short command text (an alias value, a configured entry), flattened over its commands. */
export function shellWords(source: string): string[] {
  return parseShell(source).flatMap((command) => command.argv);
}

import path from "node:path";
import { judgeForge, judgeGit } from "./git-commands.ts";
import type { ShellCommand } from "./shell-words.ts";
import { parseShell, shellWords } from "./shell-words.ts";

// Forbidden shell commands. A command line is split into the programs it would run (shell-words.ts),
// wrappers such as `sudo`, `env X=1`, `timeout 5` and `bash -c '…'` are looked through, and each program
// is judged by its words: `echo "merge"` is harmless, `git -C repo merge x` is not.

export interface ShellVerdict {
  rule: "forbidden-command" | "golden-ledger";
  /** Why, as the second half of a sentence ("it runs `git merge`; …"). */
  why: string;
}

export interface ShellPolicy {
  /** `forbidden_commands` of the system configuration. */
  configured: readonly string[];
  /** Lower-case file names no command may mention (the answer key). */
  answerKeyNames: readonly string[];
}

/** Nesting (`bash -c "$(…)"`, aliases) deeper than this is refused rather than judged. */
const MAX_DEPTH = 8;

const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh"]);
const INTERPRETER = /^(?:sh|bash|zsh|dash|ksh|mksh|ash|fish|csh|tcsh|python[0-9.]*|perl|ruby|node|php|pwsh)$/;
const DOWNLOADERS = new Set(["curl", "wget"]);

/** Programs that run the rest of their words as a command, and which of their options take a value. */
const WRAPPERS = new Map<string, { withValue: string[]; positionals?: number }>(
  Object.entries({
    sudo: {
      withValue: ["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-T", "-U", "--user", "--group", "--host"],
    },
    doas: { withValue: ["-u", "-C"] },
    env: { withValue: ["-u", "--unset", "-C", "--chdir"] },
    nohup: { withValue: [] },
    time: { withValue: ["-f", "--format", "-o", "--output"] },
    command: { withValue: [] },
    builtin: { withValue: [] },
    exec: { withValue: ["-a"] },
    nice: { withValue: ["-n", "--adjustment"] },
    ionice: { withValue: ["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"] },
    timeout: { withValue: ["-k", "-s", "--kill-after", "--signal"], positionals: 1 },
    stdbuf: { withValue: ["-i", "-o", "-e", "--input", "--output", "--error"] },
    setsid: { withValue: [] },
    busybox: { withValue: [] },
    xargs: { withValue: ["-I", "-n", "-P", "-d", "-E", "-L", "-s", "-a", "--max-args", "--max-procs"] },
  }),
);
const KEYWORDS = new Set(["if", "then", "else", "elif", "while", "until", "do", "!", "{", "}"]);

interface Words {
  argv: string[];
  dynamic: boolean[];
}

/** Judges one shell command line; undefined when nothing in it is forbidden. */
export function judgeShellCommand(command: string, policy: ShellPolicy): ShellVerdict | undefined {
  const flat = normaliseText(command);
  for (const entry of policy.configured) {
    const normalised = normaliseText(entry);
    if (normalised !== "" && flat.includes(normalised)) {
      return forbidden(
        `it contains \`${entry.trim()}\`, which this system's forbidden_commands list refuses`,
      );
    }
  }
  return judgeSource(command, policy, 0);
}

function judgeSource(source: string, policy: ShellPolicy, depth: number): ShellVerdict | undefined {
  if (depth > MAX_DEPTH) return forbidden("it nests commands too deeply to be judged");
  const commands = parseShell(source);
  const unwrapped: Words[] = [];
  for (const command of commands) {
    const verdict = judgeAnswerKey(command, policy) ?? judgeSubstitutions(command, policy, depth);
    if (verdict !== undefined) return verdict;
    const words = unwrap({ argv: command.argv, dynamic: command.dynamic }, policy, depth);
    if ("rule" in words) return words;
    unwrapped.push(words);
    const judged = judgeProgram(words, command, policy, depth);
    if (judged !== undefined) return judged;
  }
  return judgeDownloadPipes(commands, unwrapped);
}

function judgeAnswerKey(command: ShellCommand, policy: ShellPolicy): ShellVerdict | undefined {
  for (const word of [...command.argv, ...command.redirects]) {
    const lower = word.toLowerCase();
    const name = policy.answerKeyNames.find((answerKey) => lower.includes(answerKey));
    if (name !== undefined) {
      return {
        rule: "golden-ledger",
        why: `it names \`${name}\`, the answer key, which no agent may read or write; judge the target by its behaviour and code instead`,
      };
    }
  }
  return undefined;
}

function judgeSubstitutions(command: ShellCommand, policy: ShellPolicy, depth: number) {
  for (const body of command.substitutions) {
    const verdict = judgeSource(body, policy, depth + 1);
    if (verdict !== undefined) return verdict;
  }
  return undefined;
}

/** Strips assignments, keywords and wrapper programs; judges `env -S '…'` strings on the way. */
function unwrap(words: Words, policy: ShellPolicy, depth: number): Words | ShellVerdict {
  let { argv, dynamic } = words;
  for (;;) {
    let start = 0;
    while (start < argv.length && (KEYWORDS.has(argv[start]!) || isAssignment(argv[start]!))) start += 1;
    argv = argv.slice(start);
    dynamic = dynamic.slice(start);
    const wrapper = argv[0] === undefined ? undefined : WRAPPERS.get(path.basename(argv[0]));
    if (wrapper === undefined) return { argv, dynamic };
    let index = 1;
    let positionals = wrapper.positionals ?? 0;
    while (index < argv.length) {
      const word = argv[index]!;
      if (word === "--") {
        index += 1;
        break;
      }
      if (word === "-S" || word === "--split-string" || word.startsWith("--split-string=")) {
        const text = word.includes("=") ? word.slice(word.indexOf("=") + 1) : (argv[index + 1] ?? "");
        return judgeSource(text, policy, depth + 1) ?? { argv: [], dynamic: [] };
      }
      if (word.startsWith("--")) {
        index += !word.includes("=") && wrapper.withValue.includes(word) ? 2 : 1;
      } else if (word.startsWith("-") && word.length > 1) {
        // In a cluster such as `-iu root` only the last letter can take the next word as its value.
        index += wrapper.withValue.includes(`-${word.at(-1)}`) ? 2 : 1;
      } else if (isAssignment(word)) index += 1;
      else if (positionals > 0) {
        positionals -= 1;
        index += 1;
      } else break;
    }
    argv = argv.slice(index);
    dynamic = dynamic.slice(index);
  }
}

function judgeProgram(words: Words, command: ShellCommand, policy: ShellPolicy, depth: number) {
  const { argv, dynamic } = words;
  if (argv.length === 0) return undefined;
  if (dynamic[0] === true) {
    return forbidden(
      `it runs a program whose name is only known at run time (\`${argv[0]}\`), so it cannot be judged; write the program name literally`,
    );
  }
  const program = path.basename(argv[0]!);
  const configured = judgeConfiguredWords(program, argv, policy);
  if (configured !== undefined) return configured;
  if (program === "git") return judgeGit(argv, dynamic, (source) => judgeSource(source, policy, depth + 1));
  if (program === "gh" || program === "glab" || program === "hub") return judgeForge(program, argv);
  if (program === "rm") return judgeRemove(argv, dynamic);
  if (program === "eval") return judgeSource(argv.slice(1).join(" "), policy, depth + 1);
  if (INTERPRETER.test(program) && command.substitutions.some((body) => runsDownloader(body))) {
    return forbidden(
      `it feeds a download into \`${program}\`, running code nobody has read; download the file, read it, and run only what you have checked`,
    );
  }
  if (SHELLS.has(program) || program === "su") {
    const script = inlineScript(program, argv);
    if (script !== undefined) return judgeSource(script, policy, depth + 1);
    // `bash <<EOF … EOF` runs the here-document as its script.
    for (const body of command.heredocs) {
      const verdict = judgeSource(body, policy, depth + 1);
      if (verdict !== undefined) return verdict;
    }
  }
  return undefined;
}

/** A configured entry also matches by words, so `git  -C x push --force` is caught by `git push --force`. */
function judgeConfiguredWords(program: string, argv: string[], policy: ShellPolicy) {
  for (const entry of policy.configured) {
    const [first, ...rest] = shellWords(entry);
    if (first === undefined || path.basename(first) !== program) continue;
    let position = 1;
    const allFound = rest.every((word) => {
      while (position < argv.length && argv[position] !== word) position += 1;
      position += 1;
      return position <= argv.length;
    });
    if (allFound) {
      return forbidden(`it runs \`${entry.trim()}\`, which this system's forbidden_commands list refuses`);
    }
  }
  return undefined;
}

/** The text given to `sh -c`, `bash -lc`, `su -c`… */
function inlineScript(program: string, argv: string[]): string | undefined {
  if (program === "su") {
    const at = argv.findIndex((word) => word === "-c" || word === "--command");
    if (at !== -1) return argv[at + 1];
    return argv.find((word) => word.startsWith("--command="))?.slice("--command=".length);
  }
  let wantsScript = false;
  for (let index = 1; index < argv.length; index += 1) {
    const word = argv[index]!;
    if (["-o", "+o", "-O", "+O", "--rcfile", "--init-file"].includes(word)) index += 1;
    else if (word.startsWith("--")) continue;
    else if (/^[-+][A-Za-z]+$/.test(word)) wantsScript ||= word.includes("c");
    else return wantsScript ? word : undefined;
  }
  return undefined;
}

function judgeRemove(argv: string[], dynamic: boolean[]): ShellVerdict | undefined {
  let recursive = false;
  let optionsEnded = false;
  const targets: Array<{ word: string; dynamic: boolean }> = [];
  argv.slice(1).forEach((word, offset) => {
    if (!optionsEnded && word === "--") optionsEnded = true;
    else if (!optionsEnded && word.startsWith("--")) recursive ||= word === "--recursive";
    else if (!optionsEnded && word.startsWith("-") && word.length > 1) recursive ||= /[rR]/.test(word);
    else targets.push({ word, dynamic: dynamic[offset + 1] === true });
  });
  if (!recursive) return undefined;
  for (const target of targets) {
    const segments = target.word.split("/");
    const outside =
      target.dynamic ||
      target.word.startsWith("/") ||
      target.word.startsWith("~") ||
      segments.includes("..") ||
      /^(?:\.\/?|\*|\.\/\*|\.\*)$/.test(target.word);
    if (outside) {
      return forbidden(
        `it recursively deletes \`${target.word}\`, which is not a relative path inside the working tree; delete only relative paths such as \`rm -rf build\``,
      );
    }
  }
  return undefined;
}

/** A pipeline where a download flows into an interpreter: `curl … | sh`, `wget -O- … | sudo bash`. */
function judgeDownloadPipes(commands: ShellCommand[], unwrapped: Words[]): ShellVerdict | undefined {
  let downloadIn: number | undefined;
  for (let index = 0; index < commands.length; index += 1) {
    const pipeline = commands[index]!.pipeline;
    const first = unwrapped[index]?.argv[0];
    const program = first === undefined ? "" : path.basename(first);
    if (DOWNLOADERS.has(program)) downloadIn = pipeline;
    else if (downloadIn === pipeline && INTERPRETER.test(program)) {
      return forbidden(
        `it pipes a download into \`${program}\`, running code nobody has read; download the file, read it, and run only what you have checked`,
      );
    }
  }
  return undefined;
}

function runsDownloader(source: string): boolean {
  return parseShell(source).some((command) => {
    const first = command.argv.find((word) => !isAssignment(word) && !WRAPPERS.has(word));
    return (
      (first !== undefined && DOWNLOADERS.has(path.basename(first))) ||
      command.substitutions.some(runsDownloader)
    );
  });
}

function isAssignment(word: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*=/.test(word);
}

function normaliseText(text: string): string {
  return text.replace(/\s+/g, " ").trim().toLowerCase();
}

function forbidden(why: string): ShellVerdict {
  return { rule: "forbidden-command", why };
}

import { describe, expect, it } from "vitest";
import { parseShell } from "../../src/guardrails/shell-words.ts";

const argvs = (source: string) => parseShell(source).map((command) => command.argv);

describe("parseShell", () => {
  it("splits on ;, &&, ||, |, & and newlines, keeping pipelines together", () => {
    const commands = parseShell("a 1; b && c || d | e & f\ng");
    expect(commands.map((command) => [command.argv[0], command.pipeline])).toEqual([
      ["a", 0],
      ["b", 1],
      ["c", 2],
      ["d", 3],
      ["e", 3],
      ["f", 4],
      ["g", 5],
    ]);
  });

  it("removes quotes and escapes, keeping quoted separators inside one word", () => {
    expect(argvs(`echo "a; b" 'c && d' e\\ f g"h"'i' ""`)).toEqual([
      ["echo", "a; b", "c && d", "e f", "ghi", ""],
    ]);
  });

  it("reads ANSI-C quoting and line continuations", () => {
    expect(argvs("printf $'a\\tb\\x41' \\\n next")).toEqual([["printf", "a\tbA", "next"]]);
  });

  it("sets redirections aside, file descriptors included", () => {
    const [command] = parseShell("npm test 2>&1 >out.log < in.txt &>> all.log");
    expect(command).toMatchObject({
      argv: ["npm", "test"],
      redirects: ["1", "out.log", "in.txt", "all.log"],
    });
  });

  it("returns substitutions as commands of their own and marks their words dynamic", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax, not a template
    const [command] = parseShell('echo "x $(git status) y" `date` <(ls) $HOME ${A:-$(id)}');
    expect(command?.substitutions).toEqual(["git status", "date", "ls", "A:-$(id)"]);
    expect(command?.dynamic).toEqual([false, true, true, true, true, true]);
  });

  it("does not run single-quoted substitutions", () => {
    expect(parseShell("echo '$(git merge x)'")[0]?.substitutions).toEqual([]);
  });

  it("skips comments", () => {
    expect(argvs("ls # git merge x\npwd")).toEqual([["ls"], ["pwd"]]);
  });

  it("keeps here-document bodies as data of their command, and the commands after them", () => {
    const commands = parseShell("cat > x.txt <<'EOF'\nit's not a command\nEOF\ngit status");
    expect(commands.map((command) => command.argv)).toEqual([["cat"], ["git", "status"]]);
    expect(commands[0]?.heredocs).toEqual(["it's not a command\n"]);
  });

  it("finds substitutions in unquoted here-documents and reads here-strings", () => {
    const [heredoc] = parseShell("cat <<-EOF\n\thello $(whoami)\n\tEOF");
    expect(heredoc?.substitutions).toEqual(["whoami"]);
    expect(parseShell("bash <<< 'git status'")[0]?.heredocs).toEqual(["git status"]);
  });
});

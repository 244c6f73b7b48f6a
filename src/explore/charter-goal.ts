// Reads a charter ("open the entry page and find a way to Settings", "check that /invoices shows \"Monthly
// total\"", "create a new project") into the goal a deterministic walker can pursue without a model: a page
// to reach, texts that must appear there, and a form to complete. The heuristics are generic on purpose:
// they read the charter's grammar, never the names of a particular application.

export interface CharterGoal {
  /** The page to reach: a path the charter wrote, and/or words its link or title should carry. */
  page?: { path?: string; words?: string };
  /** Texts that must appear once the page is reached (quoted in the charter). */
  texts: string[];
  /** A form to complete: what it creates or is called ("project", "contact"). */
  form?: { subject: string };
}

/** Words that name the page a run starts on, not a page to reach. */
const ENTRY_WORDS = new Set(["entry", "home", "start", "landing", "main", "first", "index", "front"]);
/** Words that end a page name ("the Settings page and …"). */
const NAME_END = String.raw`(?=\s+(?:page|screen|section|tab|view|area|and|then|to|where|which|that|from)\b|\s*[,.;:!?)]|\s*$)`;
const NAME = String.raw`([a-z0-9][\w'&-]*(?:\s+[a-z0-9][\w'&-]*){0,3}?)`;

export function parseCharter(charter: string): CharterGoal {
  const text = charter.trim();
  const goal: CharterGoal = { texts: quotedTexts(text) };
  const unquoted = text.replace(/["“”][^"“”]*["“”]/g, " ");
  const path = /(?:^|[\s(])(\/[\w\-./~%]*)/.exec(unquoted)?.[1];
  const words = pageWords(unquoted);
  if (path || words)
    goal.page = { ...(path ? { path: path.replace(/[.,;]+$/, "") } : {}), ...(words ? { words } : {}) };
  const subject = formSubject(unquoted);
  if (subject) goal.form = { subject };
  return goal;
}

function quotedTexts(text: string): string[] {
  const texts: string[] = [];
  for (const match of text.matchAll(/["“]([^"“”]{1,200})["”]/g)) {
    const quoted = match[1]!.trim();
    if (quoted !== "") texts.push(quoted);
  }
  return texts;
}

/** "find a way to Settings", "go to the billing page", "reach the Team screen", "open Reports". */
function pageWords(text: string): string | undefined {
  const patterns = [
    new RegExp(
      String.raw`\b(?:way|path|link|navigate|go|get|move|browse)\s+to\s+(?:the\s+|a\s+|an\s+)?${NAME}${NAME_END}`,
      "gi",
    ),
    new RegExp(
      String.raw`\b(?:reach|open|visit|find|load|view)\s+(?:the\s+|a\s+|an\s+)?${NAME}\s+(?:page|screen|section|tab|view)\b`,
      "gi",
    ),
    new RegExp(String.raw`\b(?:reach|open|visit)\s+(?:the\s+)?${NAME}${NAME_END}`, "gi"),
  ];
  for (const pattern of patterns) {
    for (const match of text.matchAll(pattern)) {
      const words = match[1]!.trim();
      if (!isEntry(words) && !words.startsWith("/")) return words;
    }
  }
  return undefined;
}

function isEntry(words: string): boolean {
  return words.split(/\s+/).some((word) => ENTRY_WORDS.has(word.toLowerCase()));
}

/** "create a new project", "add a contact", "fill the signup form", "fill in the feedback form". */
function formSubject(text: string): string | undefined {
  const filled = /\bfill(?:\s+in|\s+out)?\s+(?:the\s+|a\s+|an\s+)?([\w' -]{1,40}?)\s+form\b/i.exec(text);
  if (filled) return filled[1]!.trim();
  // "open a page", "create a way" are not records; only a verb that makes something names a form, and an
  // "open the entry page" before it does not hide it.
  const created = [
    ...text.matchAll(
      /\b(?:create|add|make|submit|register|open)\s+(?:a|an|one|the)\s+(?:new\s+)?([a-z][\w-]*(?:\s+[a-z][\w-]*)?)/gi,
    ),
  ].find((match) => !/^open\b/i.test(match[0]));
  if (!created) return undefined;
  return created[1]!.replace(/\s+(?:and|then|with|from|on|in)\b.*$/i, "").trim();
}

/** Words to look a page up by when the charter gave only a path: "/team-settings" → "team settings". */
export function wordsOfPath(path: string): string | undefined {
  const last = path.split(/[?#]/)[0]!.split("/").filter(Boolean).pop();
  if (!last || /^\d+$/.test(last)) return undefined;
  return (
    decodeURIComponent(last)
      .replace(/[-_.]+/g, " ")
      .trim() || undefined
  );
}

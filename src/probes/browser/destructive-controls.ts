// Controls a probe must not operate on records it did not create: signing out (the run's session ends),
// deleting or archiving, paying or ordering, closing an account, revoking access. Judged by the words a
// person reads on the control (its accessible name) and where it leads, in English.

const DESTRUCTIVE =
  /\b(sign[\s-]?out|log[\s-]?out|logout|signout|delete|remove|destroy|erase|purge|archive|deactivate|disable account|close (my )?account|revoke|unsubscribe|reset|wipe|drop|pay|purchase|buy|checkout|place order|order now|submit order|transfer|withdraw|refund|cancel (my )?(subscription|order|plan|account))\b/i;

/** Why operating the control may destroy or spend something, or undefined when it reads harmless. */
export function destructiveReason(name: string | undefined, href?: string | undefined): string | undefined {
  const words = (name ?? "").replace(/\s+/g, " ").trim();
  const match = DESTRUCTIVE.exec(words);
  if (match) return `its name says "${match[0].toLowerCase()}"`;
  if (href) {
    const path = href.replace(/^[a-z]+:\/\/[^/]+/i, "");
    const inPath = DESTRUCTIVE.exec(path.replace(/[/_.-]+/g, " "));
    if (inPath) return `it leads to ${path.split("?")[0]} ("${inPath[0].toLowerCase()}")`;
  }
  return undefined;
}

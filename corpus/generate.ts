import { writeCorpus } from "./generator/generate.ts";

// `npx tsx corpus/generate.ts`: regenerates every corpus server, document, ledger and profile from the
// tables. Commit the result; tests/corpus fails while the committed output is stale.

const written = writeCorpus();
process.stdout.write(`corpus: wrote ${written.length} files\n`);

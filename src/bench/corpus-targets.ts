import fs from "node:fs";
import path from "node:path";
import { emitProfile } from "../../corpus/generator/emit-profile.ts";
import type { CorpusServer } from "../../corpus/model/servers.ts";
import { freePort } from "../targets/free-port.ts";

// The corpus servers as the benches point qaas at them: each one's committed profile, on a free port and
// with absolute paths into a scratch corpus (see corpus/harness/scratch.ts).

/** Writes `<root>/bench/<server>.yaml` and answers its path. */
export async function writeCorpusProfile(root: string, server: CorpusServer): Promise<string> {
  const profile = path.join(root, "bench", `${server.name}.yaml`);
  fs.mkdirSync(path.dirname(profile), { recursive: true });
  fs.writeFileSync(
    profile,
    emitProfile(server, {
      port: await freePort(),
      sourcePath: path.join(root, "servers", server.name),
      ledgerPath: path.join(root, "ledgers", `${server.name}.yaml`),
      secretsFile: path.join(root, "targets", "corpus.secrets.env"),
    }),
  );
  return profile;
}

import fs from "node:fs";
import path from "node:path";
import { DEFAULT_CONFIG_DIR } from "../config/load-config.ts";
import { QaasError } from "../errors.ts";
import { loadTarget } from "../targets/load-target.ts";
import { guessProfile, type ProfileGuess } from "./guess-profile.ts";
import { renderProfile } from "./render-profile.ts";
import { isDirectory } from "./repository.ts";

// `qaas init [DIR]`: guess a profile for the repository in DIR and write it where `--target` finds it,
// never over an existing file unless told to, and only once the profile loader accepts what was written.

export interface InitOptions {
  /** The repository to inspect (default: the working folder). */
  dir?: string;
  /** Where to write the profile (default: `<config>/targets/<name>.yaml`). */
  out?: string;
  name?: string;
  force?: boolean;
  configDir?: string;
}

export interface InitResult {
  file: string;
  guess: ProfileGuess;
  /** What to pass to `--target`: the name when the file is where names are looked up, else its path. */
  targetArgument: string;
  warnings: string[];
}

export async function initTarget(options: InitOptions = {}): Promise<InitResult> {
  const root = path.resolve(options.dir ?? ".");
  if (!isDirectory(root))
    throw new QaasError("INIT_DIR_NOT_FOUND", `${root} is not a folder: pass the repository to inspect`);
  const configDir = options.configDir ?? DEFAULT_CONFIG_DIR;
  const outName = options.out ? path.basename(options.out).replace(/\.ya?ml$/i, "") : undefined;
  const outNameFits = outName !== undefined && /^[a-z0-9][a-z0-9_-]*$/.test(outName);
  const name = options.name ?? (outNameFits ? outName : undefined);
  const nameFrom = options.name ? "--name" : "the --out file's name";
  const targetsDir = path.join(configDir, "targets");
  // The name is needed for the default file, so guess first; the profile's folder only shapes source.path.
  const profileDir = options.out ? path.dirname(path.resolve(options.out)) : targetsDir;
  const guess = await guessProfile(root, { name, nameFrom, profileDir });
  const file = path.resolve(options.out ?? path.join(targetsDir, `${guess.name}.yaml`));
  if (fs.existsSync(file) && !options.force) {
    throw new QaasError(
      "INIT_EXISTS",
      `${file} already exists; pass --force to overwrite it, or --out to write elsewhere`,
    );
  }
  const text = renderProfile(guess, root);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  // Written beside the destination first, so source.path resolves the same, and checked by the loader.
  const draft = `${file}.${process.pid}.draft.yaml`;
  fs.writeFileSync(draft, text);
  const warnings: string[] = [];
  try {
    loadTarget(draft);
    fs.renameSync(draft, file);
  } catch (error) {
    fs.rmSync(draft, { force: true });
    throw new QaasError(
      "INIT_INVALID",
      `the guessed profile does not load (a bug in qaas init): ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const inTargets =
    path.dirname(file) === path.resolve(targetsDir) && path.basename(file, ".yaml") === guess.name;
  if (guess.name !== path.basename(file).replace(/\.ya?ml$/i, ""))
    warnings.push(
      `the profile is named "${guess.name}" but the file is ${path.basename(file)}; --target takes its path`,
    );
  return { file, guess, targetArgument: inTargets ? guess.name : file, warnings };
}

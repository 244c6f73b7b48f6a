import { QaasError } from "../errors.ts";
import { RunStore } from "../store/run-store.ts";

/** Opens the run a command names; `latest` means the newest run (a run actually named `latest` wins). */
export function openRunArgument(home: string, run: string): RunStore {
  if (run === "latest") {
    try {
      return RunStore.open(home, run);
    } catch {
      const newest = RunStore.list(home)[0];
      if (!newest)
        throw new QaasError("RUN_NOT_FOUND", `no runs in ${home} yet; start one with \`qaas run\``);
      return RunStore.open(home, newest.id);
    }
  }
  return RunStore.open(home, run);
}

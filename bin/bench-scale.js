#!/usr/bin/env node
// `npm run bench:scale`: queue mode's throughput over 1, 2 and 4 workers, run through tsx like the CLI.
import { register } from "tsx/esm/api";

register();
await import("../src/bench/scale-bench.ts");

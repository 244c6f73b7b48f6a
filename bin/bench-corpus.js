#!/usr/bin/env node
// `npm run bench:corpus`: the conformance corpus benchmark, run through tsx like the CLI.
import { register } from "tsx/esm/api";

register();
await import("../src/bench/corpus-bench.ts");

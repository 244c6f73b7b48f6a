#!/usr/bin/env node
// `npm run bench`: the speed and memory benchmark, run through tsx like the CLI.
import { register } from "tsx/esm/api";

register();
await import("../src/bench/bench.ts");

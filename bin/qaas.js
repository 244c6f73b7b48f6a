#!/usr/bin/env node
// The CLI is TypeScript run through tsx, so `npx qaas` works straight after `npm ci` with no build step.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/main.ts");

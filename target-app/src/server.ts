import { startApp } from "./app.ts";

const running = await startApp();
console.log(`Tasklane listening on ${running.url} (data in ${running.config.dataDir})`);

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

import fs from "node:fs";

/**
 * Progress lines while a run works: on stderr unless output is data (`--json`), and always appended to the
 * run's `progress.log`, so what the agents said (which pages they opened, why a pass stopped) outlives the
 * terminal. A log that cannot be written is given up on, never the run.
 */
export class Progress {
  private readonly started = Date.now();
  private logFile: string | undefined;
  findings = 0;
  spentUsd = 0;

  constructor(
    private readonly quiet: boolean,
    logFile?: string,
  ) {
    this.logFile = logFile;
  }

  line(message: string): void {
    const seconds = ((Date.now() - this.started) / 1000).toFixed(1).padStart(6);
    const text = `[${seconds}s] ${message}  (findings ${this.findings}, spent $${this.spentUsd.toFixed(4)})\n`;
    if (!this.quiet) process.stderr.write(text);
    if (!this.logFile) return;
    try {
      fs.appendFileSync(this.logFile, `${new Date().toISOString()} ${text}`);
    } catch {
      this.logFile = undefined;
    }
  }
}

/** Progress lines on stderr while a run works; silent when output is data (`--json`). */
export class Progress {
  private readonly started = Date.now();
  findings = 0;
  spentUsd = 0;

  constructor(private readonly quiet: boolean) {}

  line(message: string): void {
    if (this.quiet) return;
    const seconds = ((Date.now() - this.started) / 1000).toFixed(1).padStart(6);
    process.stderr.write(
      `[${seconds}s] ${message}  (findings ${this.findings}, spent $${this.spentUsd.toFixed(4)})\n`,
    );
  }
}

/** Every tool answers `ok(data)` or `err(reason)`: an error is information an agent can act on, never a throw. */
export type ToolResult<Data = unknown> =
  | { ok: true; data: Data }
  | { ok: false; error: string; details?: unknown };

export const ok = <Data>(data: Data): ToolResult<Data> => ({ ok: true, data });
export const err = (error: string, details?: unknown): ToolResult<never> =>
  details === undefined ? { ok: false, error } : { ok: false, error, details };

/** Probes answer their data, or a string saying why they could not run; either way a tool result. */
export const fromProbe = <Data>(result: string | Data): ToolResult<Data> =>
  typeof result === "string" ? err(result) : ok(result);

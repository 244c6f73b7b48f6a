/** An error a user can act on: a stable code, and a message naming what is wrong and where. */
export class QaasError extends Error {
  override readonly name = "QaasError";
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

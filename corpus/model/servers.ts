// The corpus servers: each one a target in its own right, in a different stack, database, sign-in style and
// documentation coverage, so a technique is measured across the contexts real applications put it in.

export type Stack = "node" | "python";
export type DatabaseKind = "sqlite" | "postgres";
/** bearer: a JWT from a JSON sign-in; cookie: a session cookie from a form sign-in; apikey: a static header. */
export type AuthStyle = "bearer" | "cookie" | "apikey";
/** full: every operation documented; partial: only some; none: no document at all. */
export type DocCoverage = "full" | "partial" | "none";

export interface CorpusServer {
  name: string;
  stack: Stack;
  database: DatabaseKind;
  auth: AuthStyle;
  doc: DocCoverage;
  /** The port the committed profile names; the bench and the tests pick free ports instead. */
  port: number;
  /** Whether the second member owns records of their own (else they own nothing, a harder authorization context). */
  secondUserOwnsData: boolean;
}

export const SERVERS = [
  {
    name: "node-sqlite-bearer-fulldoc",
    stack: "node",
    database: "sqlite",
    auth: "bearer",
    doc: "full",
    port: 4311,
    secondUserOwnsData: true,
  },
  {
    name: "python-sqlite-cookie-nodoc",
    stack: "python",
    database: "sqlite",
    auth: "cookie",
    doc: "none",
    port: 4312,
    secondUserOwnsData: false,
  },
  {
    name: "node-postgres-apikey-partialdoc",
    stack: "node",
    database: "postgres",
    auth: "apikey",
    doc: "partial",
    port: 4313,
    secondUserOwnsData: true,
  },
  {
    name: "python-sqlite-apikey-partialdoc",
    stack: "python",
    database: "sqlite",
    auth: "apikey",
    doc: "partial",
    port: 4315,
    secondUserOwnsData: false,
  },
  {
    name: "python-postgres-bearer-fulldoc",
    stack: "python",
    database: "postgres",
    auth: "bearer",
    doc: "full",
    port: 4314,
    secondUserOwnsData: false,
  },
] as const satisfies readonly CorpusServer[];

export type ServerName = (typeof SERVERS)[number]["name"];

export function serverNamed(name: string): CorpusServer {
  const found = SERVERS.find((server) => server.name === name);
  if (!found)
    throw new Error(`unknown corpus server "${name}" (known: ${SERVERS.map((s) => s.name).join(", ")})`);
  return found;
}

/** The people every server seeds. `owner` of the second member depends on `secondUserOwnsData`. */
export const PEOPLE = [
  { key: "alice", name: "Alice Archer", email: "alice@corpus.test", role: "member", org: 1 },
  { key: "bruno", name: "Bruno Baker", email: "bruno@corpus.test", role: "member", org: 2 },
  { key: "dana", name: "Dana Diaz", email: "dana@corpus.test", role: "admin", org: 1 },
] as const;

/** Short server ids used in variant ids and environment variable names. */
export function serverCode(server: CorpusServer): string {
  return `${server.stack === "node" ? "N" : "P"}${server.database === "sqlite" ? "S" : "P"}`;
}

/** Short names for the tables: stack and database initials. */
export const NS: ServerName = "node-sqlite-bearer-fulldoc";
export const PS: ServerName = "python-sqlite-cookie-nodoc";
export const NP: ServerName = "node-postgres-apikey-partialdoc";
export const PP: ServerName = "python-postgres-bearer-fulldoc";
export const PK: ServerName = "python-sqlite-apikey-partialdoc";

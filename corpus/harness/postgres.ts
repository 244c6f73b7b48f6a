// The corpus's PostgreSQL servers run against a throwaway cluster, started the way the test suite starts
// one (Debian's server binaries, loopback, trust authentication).
export {
  findPostgresBin,
  POSTGRES_MISSING,
  type PostgresServer,
  startPostgres,
} from "../../tests/support/postgres-server.ts";

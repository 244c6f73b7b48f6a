/** Database error messages that only appear when SQL text was broken by input (SQLite, PostgreSQL, MySQL, Oracle, SQL Server). */
export const SQL_ERROR =
  /SQLITE_ERROR|SQLite3?::|sqlite3?\.OperationalError|unrecognized token|syntax error at or near|near "[^"]*": syntax error|unterminated quoted string|You have an error in your SQL syntax|SQLSTATE\[|ORA-\d{5}|PG::SyntaxError|psycopg2?\.errors|quoted string not properly terminated|incomplete input|Unclosed quotation mark|mysql_fetch|SequelizeDatabaseError|QueryFailedError|PrismaClientKnownRequestError/i;

export function hasSqlError(text: string): boolean {
  return SQL_ERROR.test(text);
}

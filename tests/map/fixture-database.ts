import Database from "better-sqlite3";

/** A small library schema: foreign keys (one composite, one implicit), unique and plain indexes, CHECKs. */
export function createFixtureDatabase(file: string): void {
  const database = new Database(file);
  database.exec(`
    CREATE TABLE authors (
      id INTEGER PRIMARY KEY,
      email TEXT NOT NULL UNIQUE,
      "check" TEXT -- a column named like the keyword: CHECK (not a constraint)
    );
    CREATE TABLE books (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      author_id INTEGER NOT NULL REFERENCES authors(id),
      isbn TEXT,
      price_cents INTEGER NOT NULL DEFAULT 0 CHECK (price_cents >= 0),
      status TEXT,
      CONSTRAINT status_check CHECK (status IN ('draft', 'published'))
    );
    CREATE INDEX books_by_author ON books (author_id, status);
    CREATE UNIQUE INDEX books_isbn ON books (isbn);
    CREATE TABLE loans (
      code TEXT PRIMARY KEY,
      book_id INTEGER,
      author_id INTEGER,
      FOREIGN KEY (book_id, author_id) REFERENCES books (id, author_id),
      FOREIGN KEY (author_id) REFERENCES authors
    );
  `);
  database.close();
}

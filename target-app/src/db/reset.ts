import { loadConfig } from "../config.ts";
import { openDatabase } from "./connection.ts";
import { createSchema, dropSchema } from "./schema.ts";
import { seedDatabase } from "./seed.ts";

// Re-creates the schema and seed data in place, so a server that has the database open sees the new data.
const config = loadConfig(process.env);
const db = openDatabase(config.dbFile);
const summary = db.transaction(() => {
  dropSchema(db);
  createSchema(db);
  return seedDatabase(db);
})();
db.close();
console.log(
  `reset ${config.dbFile}: ${summary.tenants} tenants, ${summary.users} users, ${summary.projects} projects, ` +
    `${summary.tasks} tasks, ${summary.comments} comments`,
);

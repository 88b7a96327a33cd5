/** What the benchmarks read from a simulator's audit table, to count the REST calls a command made. */
import { Database } from "../../core/sqlite.js";

/** The number of requests the simulator at `dbPath` has recorded. */
export function countAuditRows(dbPath: string): number {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare("SELECT count(*) AS n FROM audit_events").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

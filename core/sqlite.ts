/**
 * The one SQLite binding of svc: node's own `node:sqlite` (Node ≥ 22.16), behind the small part of the
 * better-sqlite3 API that svc's code was written against (`prepare`, `pluck`, `raw`, `transaction`,
 * `pragma`, `backup`), so that every database (the cache, the simulator's store, the pulse queue) is opened
 * here and nowhere else.
 *
 * Why not better-sqlite3 (issue 36, measured on Node 24.21.0): 12.x aborts the process at exit under
 * Node ≥ 24.19 (its `Statement` is a `node::ObjectWrap` whose finalizer, run by a GC with no V8 context,
 * trips `RemoveEnvironmentCleanupHook`'s assertion: 40 of 40 runs of a GC-heavy script aborted); 13.x does
 * not, but loading its native addon took ~10 ms of each start against ~3-4 ms for `node:sqlite` (require,
 * open, first query; every fetch starts the helper), and it ships a native binary per platform. `node:sqlite`
 * has no native build at all, so one `npm ci` serves every Node a test matrix runs.
 *
 * What differs from better-sqlite3, and is made the same here:
 * - BLOB values come back as `Uint8Array`; svc's code reads them as `Buffer` (`toString("latin1")`,
 *   `equals`), so each is viewed as one, without a copy.
 * - Errors carry `code: "ERR_SQLITE_ERROR"` and the number in `errcode`; here they are `SqliteError`s whose
 *   `code` is SQLite's own name (`SQLITE_BUSY`, `SQLITE_FULL`, `SQLITE_CONSTRAINT_UNIQUE`), as svc tests them.
 * - The busy timeout defaults to 0; here, as in better-sqlite3, to 5 seconds.
 * - There is no `transaction()` helper: `transaction` below runs BEGIN/COMMIT, or a savepoint inside one.
 * - Node 22 prints "ExperimentalWarning: SQLite is an experimental feature" when the module is first loaded,
 *   on the helper's stderr that git shows the user; that one warning is not printed (`loadSqlite`).
 *
 * Rows are objects with a null prototype, as `node:sqlite` makes them.
 */
import { existsSync } from "node:fs";
import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite";
import { pathToFileURL } from "node:url";

type NodeSqlite = typeof import("node:sqlite");

let nodeSqlite: NodeSqlite | undefined;

/** `node:sqlite`, loaded on first use, without Node 22's experimental-feature warning. */
function loadSqlite(): NodeSqlite {
  if (nodeSqlite !== undefined) return nodeSqlite;
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === "string" ? warning : warning.message;
    if (/^SQLite is an experimental feature/.test(text)) return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    nodeSqlite = process.getBuiltinModule("node:sqlite");
  } finally {
    process.emitWarning = emitWarning;
  }
  if (nodeSqlite === undefined) {
    throw new Error(`this Node (${process.version}) has no node:sqlite; svc needs Node 22.16 or later`);
  }
  return nodeSqlite;
}

/** SQLite's result codes by number (https://sqlite.org/rescode.html), primary and the extended ones. */
const RESULT_CODES: Readonly<Record<number, string>> = {
  1: "ERROR",
  2: "INTERNAL",
  3: "PERM",
  4: "ABORT",
  5: "BUSY",
  6: "LOCKED",
  7: "NOMEM",
  8: "READONLY",
  9: "INTERRUPT",
  10: "IOERR",
  11: "CORRUPT",
  12: "NOTFOUND",
  13: "FULL",
  14: "CANTOPEN",
  15: "PROTOCOL",
  16: "EMPTY",
  17: "SCHEMA",
  18: "TOOBIG",
  19: "CONSTRAINT",
  20: "MISMATCH",
  21: "MISUSE",
  22: "NOLFS",
  23: "AUTH",
  24: "FORMAT",
  25: "RANGE",
  26: "NOTADB",
  27: "NOTICE",
  28: "WARNING",
  261: "BUSY_RECOVERY",
  517: "BUSY_SNAPSHOT",
  773: "BUSY_TIMEOUT",
  262: "LOCKED_SHAREDCACHE",
  518: "LOCKED_VTAB",
  264: "READONLY_RECOVERY",
  520: "READONLY_CANTLOCK",
  776: "READONLY_ROLLBACK",
  1032: "READONLY_DBMOVED",
  1288: "READONLY_CANTINIT",
  1544: "READONLY_DIRECTORY",
  266: "IOERR_READ",
  522: "IOERR_SHORT_READ",
  778: "IOERR_WRITE",
  1034: "IOERR_FSYNC",
  1290: "IOERR_DIR_FSYNC",
  1546: "IOERR_TRUNCATE",
  1802: "IOERR_FSTAT",
  2058: "IOERR_UNLOCK",
  2314: "IOERR_RDLOCK",
  2570: "IOERR_DELETE",
  3082: "IOERR_NOMEM",
  3338: "IOERR_ACCESS",
  3594: "IOERR_CHECKRESERVEDLOCK",
  3850: "IOERR_LOCK",
  4106: "IOERR_CLOSE",
  4618: "IOERR_SHMOPEN",
  4874: "IOERR_SHMSIZE",
  5130: "IOERR_SHMLOCK",
  5386: "IOERR_SHMMAP",
  5642: "IOERR_SEEK",
  5898: "IOERR_DELETE_NOENT",
  6154: "IOERR_MMAP",
  6410: "IOERR_GETTEMPPATH",
  6666: "IOERR_CONVPATH",
  8202: "IOERR_DATA",
  8458: "IOERR_CORRUPTFS",
  267: "CORRUPT_VTAB",
  523: "CORRUPT_SEQUENCE",
  779: "CORRUPT_INDEX",
  270: "CANTOPEN_NOTEMPDIR",
  526: "CANTOPEN_ISDIR",
  782: "CANTOPEN_FULLPATH",
  1038: "CANTOPEN_CONVPATH",
  1550: "CANTOPEN_SYMLINK",
  275: "CONSTRAINT_CHECK",
  531: "CONSTRAINT_COMMITHOOK",
  787: "CONSTRAINT_FOREIGNKEY",
  1043: "CONSTRAINT_FUNCTION",
  1299: "CONSTRAINT_NOTNULL",
  1555: "CONSTRAINT_PRIMARYKEY",
  1811: "CONSTRAINT_TRIGGER",
  2067: "CONSTRAINT_UNIQUE",
  2323: "CONSTRAINT_VTAB",
  2579: "CONSTRAINT_ROWID",
  2835: "CONSTRAINT_PINNED",
  3091: "CONSTRAINT_DATATYPE",
};

/** The name of SQLite result code `errcode` (`SQLITE_BUSY`); an extended code not listed gets its primary's. */
export function sqliteCodeName(errcode: number): string {
  const name = RESULT_CODES[errcode] ?? RESULT_CODES[errcode & 0xff] ?? `ERROR_${errcode}`;
  return `SQLITE_${name}`;
}

/**
 * An error SQLite returned: `code` is its name (`SQLITE_FULL`), `errcode` its number, `path` the database
 * file (cache/local-fault.ts looks at its file system to tell a full disk from a read-only one).
 */
export class SqliteError extends Error {
  readonly code: string;
  readonly errcode: number;
  readonly path: string | undefined;

  constructor(message: string, errcode: number, options?: { cause?: unknown; path?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SqliteError";
    this.errcode = errcode;
    this.code = sqliteCodeName(errcode);
    this.path = options?.path === ":memory:" ? undefined : options?.path;
  }
}

/**
 * `error` as a `SqliteError` of the database file `path` when SQLite raised it (node:sqlite's
 * `ERR_SQLITE_ERROR`), else unchanged.
 */
function fromNode(error: unknown, path: string): unknown {
  if (error instanceof Error && (error as { code?: unknown }).code === "ERR_SQLITE_ERROR") {
    const errcode = (error as { errcode?: unknown }).errcode;
    return new SqliteError(error.message, typeof errcode === "number" ? errcode : 1, { cause: error, path });
  }
  return error;
}

/** A BLOB value as the `Buffer` svc's code reads (a view of the same bytes). */
function asBuffer(value: unknown): unknown {
  return value instanceof Uint8Array && !Buffer.isBuffer(value)
    ? Buffer.from(value.buffer, value.byteOffset, value.byteLength)
    : value;
}

/**
 * Positional values, or one object of named values (`@name`, `:name` or `$name` in the SQL). `undefined` is
 * bound as NULL, as better-sqlite3 did (node:sqlite refuses it).
 */
export type BindParameters = unknown[];

/** `parameters` as node:sqlite binds them: `undefined` (positional or named) as NULL. */
function bindable(parameters: unknown[]): SQLInputValue[] {
  for (let i = 0; i < parameters.length; i++) {
    const value = parameters[i];
    if (value === undefined) parameters[i] = null;
    else if (i === 0 && typeof value === "object" && value !== null && !(value instanceof Uint8Array)) {
      const named = value as Record<string, unknown>;
      for (const name in named) {
        if (named[name] === undefined) {
          parameters[0] = Object.fromEntries(
            Object.entries(named).map(([key, entry]) => [key, entry === undefined ? null : entry]),
          );
          break;
        }
      }
    }
  }
  return parameters as SQLInputValue[];
}

/** A prepared statement; `pluck()` returns the first column of each row, `raw()` each row as an array. */
export class Statement {
  private shape: "object" | "pluck" | "raw" = "object";
  /** The columns (names, or indexes when `raw`) whose values may be BLOBs; found on the first read. */
  private blobColumns: (string | number)[] | undefined;

  constructor(
    private readonly statement: StatementSync,
    /** The database file, for errors. */
    private readonly path: string,
  ) {}

  /** Each row's first column instead of the row. */
  pluck(): this {
    this.statement.setReturnArrays(true);
    this.shape = "pluck";
    this.blobColumns = undefined;
    return this;
  }

  /** Each row as an array of its columns. */
  raw(): this {
    this.statement.setReturnArrays(true);
    this.shape = "raw";
    this.blobColumns = undefined;
    return this;
  }

  get(...parameters: BindParameters): unknown {
    let row: unknown;
    try {
      row = this.statement.get(...bindable(parameters));
    } catch (error) {
      throw fromNode(error, this.path);
    }
    return row === undefined ? undefined : this.shaped(row);
  }

  all(...parameters: BindParameters): unknown[] {
    let rows: unknown[];
    try {
      rows = this.statement.all(...bindable(parameters));
    } catch (error) {
      throw fromNode(error, this.path);
    }
    for (let i = 0; i < rows.length; i++) rows[i] = this.shaped(rows[i]);
    return rows;
  }

  /** The rows, read from SQLite as they are iterated. */
  *iterate(...parameters: BindParameters): Generator<unknown, void, undefined> {
    let rows: Iterator<unknown>;
    try {
      rows = this.statement.iterate(...bindable(parameters));
    } catch (error) {
      throw fromNode(error, this.path);
    }
    for (;;) {
      let next: IteratorResult<unknown>;
      try {
        next = rows.next();
      } catch (error) {
        throw fromNode(error, this.path);
      }
      if (next.done) return;
      yield this.shaped(next.value);
    }
  }

  run(...parameters: BindParameters): { changes: number; lastInsertRowid: number | bigint } {
    try {
      // `changes` is a bigint only when BigInt reads are turned on, which svc never does.
      return this.statement.run(...bindable(parameters)) as {
        changes: number;
        lastInsertRowid: number | bigint;
      };
    } catch (error) {
      throw fromNode(error, this.path);
    }
  }

  /** A row as svc reads it: BLOBs as `Buffer`s, the first column alone when plucked. */
  private shaped(row: unknown): unknown {
    this.blobColumns ??= this.findBlobColumns();
    const values = row as Record<string | number, unknown>;
    for (const column of this.blobColumns) values[column] = asBuffer(values[column]);
    return this.shape === "pluck" ? (row as unknown[])[0] : row;
  }

  /**
   * The columns that may hold a BLOB: those declared BLOB and those with no declared type (expressions and
   * untyped columns). A column declared TEXT or INTEGER is left alone: svc stores no BLOB in one.
   */
  private findBlobColumns(): (string | number)[] {
    const found: (string | number)[] = [];
    this.statement.columns().forEach((column: { name: string; type: string | null }, index: number) => {
      const type = column.type?.toUpperCase();
      if (type === undefined || type === null || type === "" || type.includes("BLOB")) {
        found.push(this.shape === "object" ? column.name : index);
      }
    });
    return this.shape === "pluck" ? found.filter((column) => column === 0) : found;
  }
}

export interface OpenOptions {
  /** Open read-only; the file must exist. */
  readonly readonly?: boolean;
  /** Refuse to create the file when it does not exist. */
  readonly fileMustExist?: boolean;
  /** How long a statement waits for another connection's lock before SQLITE_BUSY; default 5000 ms. */
  readonly timeout?: number;
  /**
   * Read-only, as SQLite's `immutable=1` URI parameter opens a file: no locks and no `-shm` file, which a
   * reader of a WAL database otherwise creates (and cannot on a read-only or full file system). What a
   * `-wal` file holds is not seen.
   */
  readonly immutable?: boolean;
}

/** A transaction made by `Database.transaction`: call it (BEGIN) or one of its modes. */
export interface Transaction<Args extends unknown[], Result> {
  (...args: Args): Result;
  deferred(...args: Args): Result;
  immediate(...args: Args): Result;
  exclusive(...args: Args): Result;
}

/** An open SQLite database file. */
export class Database {
  private readonly db: DatabaseSync;
  private savepoints = 0;

  constructor(
    readonly path: string,
    options: OpenOptions = {},
  ) {
    const { DatabaseSync } = loadSqlite();
    if (options.fileMustExist && path !== ":memory:" && !existsSync(path)) {
      throw new SqliteError(`unable to open database file: ${path} does not exist`, 14, { path });
    }
    try {
      const immutable = options.immutable === true && path !== ":memory:";
      this.db = new DatabaseSync(immutable ? `${pathToFileURL(path).href}?immutable=1` : path, {
        readOnly: options.readonly === true || immutable,
        timeout: options.timeout ?? 5000,
      });
    } catch (error) {
      throw fromNode(error, this.path);
    }
  }

  /** Whether the database is still open (`close` not called). */
  get open(): boolean {
    return this.db.isOpen;
  }

  get inTransaction(): boolean {
    return this.db.isTransaction;
  }

  prepare(sql: string): Statement {
    try {
      return new Statement(this.db.prepare(sql), this.path);
    } catch (error) {
      throw fromNode(error, this.path);
    }
  }

  /** Runs one or more statements that return nothing. */
  exec(sql: string): void {
    try {
      this.db.exec(sql);
    } catch (error) {
      throw fromNode(error, this.path);
    }
  }

  /** `PRAGMA <source>`: its rows, or with `simple` the first column of the first row. */
  pragma(source: string, options: { simple?: boolean } = {}): unknown {
    const statement = this.prepare(`PRAGMA ${source}`);
    return options.simple ? statement.pluck().get() : statement.all();
  }

  /**
   * `work` as one transaction: BEGIN (DEFERRED, IMMEDIATE or EXCLUSIVE) before, COMMIT after, ROLLBACK when it
   * throws. Inside another transaction it is a savepoint of that one, rolled back alone when it throws.
   */
  transaction<Args extends unknown[], Result>(work: (...args: Args) => Result): Transaction<Args, Result> {
    const run =
      (mode: string) =>
      (...args: Args): Result =>
        this.inTransaction ? this.inSavepoint(work, args) : this.inTransactionOf(mode, work, args);
    return Object.assign(run("BEGIN"), {
      deferred: run("BEGIN DEFERRED"),
      immediate: run("BEGIN IMMEDIATE"),
      exclusive: run("BEGIN EXCLUSIVE"),
    });
  }

  private inTransactionOf<Args extends unknown[], Result>(
    begin: string,
    work: (...args: Args) => Result,
    args: Args,
  ): Result {
    this.exec(begin);
    let result: Result;
    try {
      result = work(...args);
    } catch (error) {
      if (this.db.isTransaction) this.exec("ROLLBACK");
      throw error;
    }
    try {
      this.exec("COMMIT");
    } catch (error) {
      if (this.db.isTransaction) this.exec("ROLLBACK");
      throw error;
    }
    return result;
  }

  private inSavepoint<Args extends unknown[], Result>(work: (...args: Args) => Result, args: Args): Result {
    const name = `svc_${++this.savepoints}`;
    this.exec(`SAVEPOINT ${name}`);
    try {
      const result = work(...args);
      this.exec(`RELEASE ${name}`);
      return result;
    } catch (error) {
      if (this.db.isTransaction) {
        this.exec(`ROLLBACK TO ${name}`);
        this.exec(`RELEASE ${name}`);
      }
      throw error;
    } finally {
      this.savepoints--;
    }
  }

  /**
   * Lets `PRAGMA writable_schema` edit `sqlite_master` (tests that damage a database on purpose): Node 24
   * opens databases with SQLITE_DBCONFIG_DEFENSIVE, which forbids it; Node 22 does not, and has no switch.
   */
  unsafeMode(on: boolean): void {
    (this.db as { enableDefensive?: (active: boolean) => void }).enableDefensive?.(!on);
  }

  /** Copies the database to the file `destination` with SQLite's online backup, every page in one step. */
  async backup(destination: string): Promise<void> {
    try {
      await loadSqlite().backup(this.db, destination, { rate: 0x7fffffff });
    } catch (error) {
      throw fromNode(error, this.path);
    }
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }
}

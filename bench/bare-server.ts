/**
 * The SQLite bare-stack baseline of `npm run bench:http`: Fastify 5 + better-sqlite3 doing the
 * least that `POST /v1/sessions` and `GET /v1/sessions?limit=50` need (bench/bare-app.ts says
 * what), so that the service's figures can be read against what the stack itself costs. Started as
 * a child process by bench/http.ts; not part of the service and imports from src/ only which
 * better-sqlite3 this Node.js loads (so the baseline does not move when src/ does).
 *
 *   BARE_PORT      port to listen on (127.0.0.1)
 *   BARE_DATABASE  SQLite file (created; its tables too)
 *   BARE_API_KEY   the one API key accepted (its SHA-256 is stored, as the service stores keys)
 *
 * The create is one `BEGIN IMMEDIATE` transaction of two prepared INSERTs.
 */
import { SQLite } from '../src/db/sqlite/addon.js'
import { bareApp, type Caller, type EventRow, type SessionRow, serveBare, sha256 } from './bare-app.js'

const PORT = Number(process.env.BARE_PORT ?? '0')
const DATABASE = process.env.BARE_DATABASE ?? ':memory:'
const API_KEY = process.env.BARE_API_KEY
if (!API_KEY) throw new Error('BARE_API_KEY is required')

// ---- the database: the service's sessions columns, one scope index, an events table

const db = new SQLite(DATABASE)
db.pragma('journal_mode = WAL')
db.pragma('busy_timeout = 5000')
db.pragma('synchronous = NORMAL')
db.exec(`
  CREATE TABLE IF NOT EXISTS api_keys (
    secret_hash TEXT PRIMARY KEY, account_id TEXT NOT NULL, livemode INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY, account_id TEXT NOT NULL, livemode INTEGER NOT NULL,
    operator_id TEXT NOT NULL, operator_ident TEXT NOT NULL, device_code TEXT NOT NULL,
    location_id TEXT, check_in_at INTEGER NOT NULL, check_out_at INTEGER, break_minutes INTEGER NOT NULL,
    notes TEXT, is_flagged INTEGER NOT NULL, flag_reason TEXT, source TEXT NOT NULL, status TEXT NOT NULL,
    deleted_at INTEGER, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS sessions_scope ON sessions (account_id, livemode, id);
  CREATE TABLE IF NOT EXISTS events (
    id TEXT PRIMARY KEY, account_id TEXT NOT NULL, livemode INTEGER NOT NULL, type TEXT NOT NULL,
    created_at INTEGER NOT NULL, payload TEXT NOT NULL
  );
`)
db.prepare('INSERT OR IGNORE INTO api_keys VALUES (?, ?, 0)').run(sha256(API_KEY), 'acct_bare')

// ---- statements

const findKey = db.prepare<[string], Caller>(
  'SELECT account_id AS accountId, livemode FROM api_keys WHERE secret_hash = ?',
)
const insertSession = db.prepare<[SessionRow]>(
  `INSERT INTO sessions VALUES (@id, @account_id, @livemode, @operator_id, @operator_ident, @device_code,
   @location_id, @check_in_at, @check_out_at, @break_minutes, @notes, @is_flagged, @flag_reason, @source,
   @status, @deleted_at, @created_at, @updated_at)`,
)
const insertEvent = db.prepare<[EventRow]>(
  'INSERT INTO events VALUES (@id, @account_id, @livemode, @type, @created_at, @payload)',
)
const createTransaction = db.transaction((session: SessionRow, event: EventRow) => {
  insertSession.run(session)
  insertEvent.run(event)
})
const page = db.prepare<[string, number, string, number], SessionRow>(
  `SELECT * FROM sessions WHERE account_id = ? AND livemode = ? AND id < ? AND deleted_at IS NULL
   ORDER BY id DESC LIMIT ?`,
)

const app = bareApp({
  findKey: (hash) => findKey.get(hash),
  create: (session, event) => createTransaction.immediate(session, event),
  page: (accountId, livemode, before, limit) => page.all(accountId, livemode, before, limit),
})
await serveBare(app, PORT, () => {
  db.close()
})

/**
 * The PostgreSQL bare-stack baseline of `npm run bench:http` (with BENCH_DATABASE=postgres):
 * Fastify 5 + `pg` doing the least that `POST /v1/sessions` and `GET /v1/sessions?limit=50` need
 * (bench/bare-app.ts says what), to read the PostgreSQL service's figures against. Started as a
 * child process by bench/http.ts, which creates the schema it runs in and drops it afterwards
 * (bench/postgres-schema.ts); imports nothing from src/.
 *
 *   BARE_PORT          port to listen on (127.0.0.1)
 *   BARE_DATABASE_URL  PostgreSQL URL whose search_path is an empty schema of this run (tables created)
 *   BARE_API_KEY       the one API key accepted (its SHA-256 is stored, as the service stores keys)
 *
 * A pool of 10 connections, as the service's. Each request is one round trip of a named (prepared
 * once per connection) statement: the create writes the session and its event in one statement, a
 * CTE, which PostgreSQL commits as one transaction; the column types are the service's (ids
 * `text collate "C"`, instants epoch-millisecond `bigint`).
 */
import pg from 'pg'
import {
  bareApp,
  type Caller,
  type EventRow,
  SESSION_COLUMNS,
  type SessionRow,
  serveBare,
  sha256,
} from './bare-app.js'

const PORT = Number(process.env.BARE_PORT ?? '0')
const DATABASE_URL = process.env.BARE_DATABASE_URL
const API_KEY = process.env.BARE_API_KEY
if (!DATABASE_URL || !API_KEY) throw new Error('BARE_DATABASE_URL and BARE_API_KEY are required')

const INT8_OID = 20
const pool = new pg.Pool({
  connectionString: DATABASE_URL,
  max: 10,
  // Epoch milliseconds are bigint; as numbers, as the service reads them.
  types: {
    getTypeParser: ((oid: number, format?: string) =>
      oid === INT8_OID
        ? Number
        : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
  },
})

await pool.query(`
  CREATE TABLE IF NOT EXISTS api_keys (
    secret_hash text PRIMARY KEY, account_id text COLLATE "C" NOT NULL, livemode integer NOT NULL
  );
  CREATE TABLE IF NOT EXISTS sessions (
    id text COLLATE "C" PRIMARY KEY, account_id text COLLATE "C" NOT NULL, livemode integer NOT NULL,
    operator_id text COLLATE "C" NOT NULL, operator_ident text NOT NULL, device_code text NOT NULL,
    location_id text COLLATE "C", check_in_at bigint NOT NULL, check_out_at bigint, break_minutes integer NOT NULL,
    notes text, is_flagged integer NOT NULL, flag_reason text, source text NOT NULL, status text NOT NULL,
    deleted_at bigint, created_at bigint NOT NULL, updated_at bigint NOT NULL
  );
  CREATE INDEX IF NOT EXISTS sessions_scope ON sessions (account_id, livemode, id);
  CREATE TABLE IF NOT EXISTS events (
    id text COLLATE "C" PRIMARY KEY, account_id text COLLATE "C" NOT NULL, livemode integer NOT NULL,
    type text NOT NULL, created_at bigint NOT NULL, payload text NOT NULL
  );
`)
// IF NOT EXISTS and ON CONFLICT: a restart (bench/http.ts's Target.restart) finds them made.
await pool.query('INSERT INTO api_keys VALUES ($1, $2, 0) ON CONFLICT DO NOTHING', [
  sha256(API_KEY),
  'acct_bare',
])

const placeholders = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => `$${from + i}`).join(', ')
// Each statement starts with `/* bare */`, which PostgreSQL keeps in pg_stat_statements' text: that
// is how bench/http.ts (BENCH_PG_STATEMENTS=1) tells this stack's statements from the service's.
const CREATE = {
  name: 'bare_create',
  text:
    `/* bare */ WITH session AS (INSERT INTO sessions VALUES (${placeholders(1, SESSION_COLUMNS.length)})) ` +
    `INSERT INTO events VALUES (${placeholders(SESSION_COLUMNS.length + 1, 6)})`,
}
const PAGE = {
  name: 'bare_page',
  text: `/* bare */ SELECT * FROM sessions WHERE account_id = $1 AND livemode = $2 AND id < $3 AND deleted_at IS NULL
         ORDER BY id DESC LIMIT $4`,
}
const FIND_KEY = {
  name: 'bare_find_key',
  text: '/* bare */ SELECT account_id AS "accountId", livemode FROM api_keys WHERE secret_hash = $1',
}

const app = bareApp({
  findKey: async (hash) => (await pool.query<Caller>({ ...FIND_KEY, values: [hash] })).rows[0],
  create: async (session: SessionRow, event: EventRow) => {
    await pool.query({
      ...CREATE,
      values: [
        ...SESSION_COLUMNS.map((column) => session[column]),
        event.id,
        event.account_id,
        event.livemode,
        event.type,
        event.created_at,
        event.payload,
      ],
    })
  },
  page: async (accountId, livemode, before, limit) =>
    (await pool.query<SessionRow>({ ...PAGE, values: [accountId, livemode, before, limit] })).rows,
})
await serveBare(app, PORT, () => pool.end())

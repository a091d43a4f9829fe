/**
 * The timesheet owns no table: its SQL is a read across other modules' tables, in
 * timesheet-read-model.ts. This re-export is for bench/sessions.ts (which explains the timesheet's
 * session query) until it imports the read model itself; nothing in src/ imports this file.
 */
export { sessionPayRowsQuery } from './timesheet-read-model.js'

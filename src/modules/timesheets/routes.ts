import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { listEnvelope, ref } from '../../core/schemas.js'
import { requireAuth } from '../../http/auth.js'
import { CSV_COLUMNS, ListTimesheetsQuery, TimesheetEntry } from './schemas.js'
import {
  isTimesheetKey,
  timesheetCsv,
  timesheetCsvFilename,
  timesheetKeyOf,
  timesheetPage,
  timesheetQuery,
  toTimesheetEntry,
  wantsCsv,
} from './service.js'

export async function timesheetRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/v1/timesheets',
    {
      config: { scope: 'timesheets:read', sites: 'per-site' },
      schema: {
        tags: ['Timesheets'],
        summary:
          "Hours per operator and work date (or workweek, from the pay rule's workweek_start), as JSON pages or one CSV file",
        description: `One entry per operator and work date (or workweek with \`group_by=week\`: the operator's pay rule's \`workweek_start\`, Monday without one, \`date\` then being its first day) that has any session, ordered by \`operator_ident\` (byte order) then \`date\`. \`from\` and \`to\` are inclusive work dates, at most 366 days apart counting both (422 \`invalid_date_range\` otherwise). Each session counts under its operator's pay rule (its own, else the account's default, else none): check-in and check-out rounded in the location's local time, unpaid breaks (recorded, or deducted by the rule's break rules), then \`hours\` (sessions \`approved\` or \`not_required\`) split into \`regular_hours\`, \`overtime_hours\` and \`double_time_hours\` by the daily, weekly and seventh-day thresholds (a workweek's days before \`from\` are read for them). \`pending_hours\` and \`rejected_hours\` are never split. Each sum is of exact durations in milliseconds, rounded half-up to 2 decimals once; the split by largest remainder so that its parts add up to \`hours\`. With no rule nothing is rounded or deducted and every hour is regular. The dates of a closed pay period answer the timesheet its close stored (unless filtered by \`location_id\`, which computes that location's sessions alone). A week entry sums the days of that week within \`from\`–\`to\`.

With \`Accept: text/csv\` the same query answers every entry at once (\`limit\` and \`cursor\` are ignored), streamed, with the header row \`${CSV_COLUMNS.join(',')}\`, CRLF line ends, RFC 4180 quoting, hours with 2 decimals, and any cell beginning with \`=\`, \`+\`, \`-\`, \`@\`, tab or carriage return prefixed with \`'\` (spreadsheet formula injection). Scope \`timesheets:read\`.`,
        querystring: ListTimesheetsQuery,
        response: {
          200: {
            description: 'A page of timesheet entries, or (Accept: text/csv) all of them as a CSV file.',
            headers: {
              'X-Total-Count': {
                type: 'integer',
                description:
                  'CSV only: the number of data rows (for a progress bar; sessions written while it streams may change it).',
              },
              'Content-Disposition': {
                type: 'string',
                description:
                  'CSV only: `attachment; filename="timesheet-<from>-<to>.csv"`; with `operator_id`, `timesheet-<from>-<to>-<operator ident>.csv`.',
              },
            },
            content: {
              'application/json': {
                schema: listEnvelope(
                  ref(TimesheetEntry),
                  'A page of timesheet entries, by operator_ident then date.',
                ),
              },
              'text/csv': {
                schema: Type.String({ description: `CSV (RFC 4180): ${CSV_COLUMNS.join(',')}` }),
              },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const auth = requireAuth(request)
      const query = timesheetQuery(request.query)
      if (wantsCsv(request.headers.accept)) {
        const { rows, stream } = await timesheetCsv(app.db, auth, query)
        const filename = await timesheetCsvFilename(app.db, auth, query)
        return (
          reply
            .type('text/csv; charset=utf-8')
            .header('x-total-count', String(rows))
            .header('content-disposition', `attachment; filename="${filename}"`)
            // A stream is sent as it is; the typed reply knows only the bodies the schema describes.
            .send(stream as never)
        )
      }
      return app.paginator.pageByKey(
        `timesheet:${query.groupBy}`,
        auth,
        request.query,
        (after, take) => timesheetPage(app.db, auth, query, after, take),
        timesheetKeyOf,
        isTimesheetKey,
        toTimesheetEntry,
      )
    },
  )
}

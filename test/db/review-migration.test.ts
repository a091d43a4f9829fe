import type { Kysely } from 'kysely'
import { describe, expect, it } from 'vitest'
import { migrateToLatest } from '../../src/db/migrate.js'
import { useDatabaseMigratedTo } from '../helpers/migrations.js'

/** Migration 007 on a database that already holds sessions: work_date and review_status backfilled. */
describe('migration 007_review_and_pay_periods', () => {
  const database = useDatabaseMigratedTo('004_outbox_tuning')

  it('backfills work_date in the location zone (UTC without one) and review_status from the flag', async () => {
    const { db } = database
    // biome-ignore lint/suspicious/noExplicitAny: the schema as it was before 007
    const old = db as unknown as Kysely<any>
    const now = Date.now()
    const location = (id: string, timezone: string) => ({
      id,
      account_id: 'acct_1',
      livemode: 0,
      name: id,
      timezone,
      address: null,
      created_at: now,
      updated_at: now,
    })
    await old
      .insertInto('locations')
      .values([location('loc_la', 'America/Los_Angeles'), location('loc_utc', 'UTC')])
      .execute()
    const session = (id: string, locationId: string | null, checkIn: string, flagged: 0 | 1) => ({
      id,
      account_id: 'acct_1',
      livemode: 0,
      operator_id: 'op_1',
      operator_ident: 'W-1',
      device_code: 'GATE',
      location_id: locationId,
      check_in_at: Date.parse(checkIn),
      check_out_at: Date.parse(checkIn) + 3_600_000,
      break_minutes: 0,
      notes: null,
      is_flagged: flagged,
      flag_reason: flagged ? 'manual_api_entry' : null,
      source: flagged ? 'api' : 'scan',
      status: 'completed',
      deleted_at: null,
      created_at: now,
      updated_at: now,
    })
    await old
      .insertInto('sessions')
      .values([
        session('ses_1', 'loc_la', '2026-11-03T06:00:00Z', 1), // 22:00 on 2 Nov in Los Angeles
        session('ses_2', 'loc_utc', '2026-11-03T06:00:00Z', 0),
        session('ses_3', null, '2026-11-02T23:30:00Z', 0),
        session('ses_4', 'loc_deleted', '2026-11-02T23:30:00Z', 1),
      ])
      .execute()

    expect(await migrateToLatest(db)).toContain('007_review_and_pay_periods')
    const rows = await db
      .selectFrom('sessions')
      .select(['id', 'work_date', 'review_status', 'reviewed_at', 'reviewed_by', 'review_note'])
      .orderBy('id')
      .execute()
    expect(rows).toEqual([
      {
        id: 'ses_1',
        work_date: '2026-11-02',
        review_status: 'pending',
        reviewed_at: null,
        reviewed_by: null,
        review_note: null,
      },
      {
        id: 'ses_2',
        work_date: '2026-11-03',
        review_status: 'not_required',
        reviewed_at: null,
        reviewed_by: null,
        review_note: null,
      },
      {
        id: 'ses_3',
        work_date: '2026-11-02',
        review_status: 'not_required',
        reviewed_at: null,
        reviewed_by: null,
        review_note: null,
      },
      {
        id: 'ses_4',
        work_date: '2026-11-02',
        review_status: 'pending',
        reviewed_at: null,
        reviewed_by: null,
        review_note: null,
      },
    ])
  })
})

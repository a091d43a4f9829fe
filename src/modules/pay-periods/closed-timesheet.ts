import type { AuthContext } from '../../core/identity.js'
import type { Trx } from '../../db/types.js'
import { foldDays, type PayDay, payHours } from '../timesheets/pay-calculation.js'
import { CSV_BATCH, type TimesheetQuery, timesheetTotals } from '../timesheets/service.js'
import { type ClosedDayRow, deleteClosedDays, insertClosedDays } from './repository.js'
import type { PayPeriodTotals } from './schemas.js'

/**
 * Stores the timesheet of a period being closed (every operator's days in [start, end], as they
 * compute now) and answers its totals. Called by the close, in its transaction, under the
 * exclusive pay-period lock: no session of those dates changes meanwhile. The timesheet reads the
 * stored days back for the period's dates (timesheets/timesheet-read-model.ts).
 */
export async function storeClosedTimesheet(
  trx: Trx,
  auth: AuthContext,
  period: { id: string; start_date: string; end_date: string },
): Promise<PayPeriodTotals> {
  const query: TimesheetQuery = { from: period.start_date, to: period.end_date, groupBy: 'day' }
  const operators = new Set<string>()
  let total: PayDay | undefined
  let rows: ClosedDayRow[] = []
  for await (const day of timesheetTotals(trx, auth, query, undefined, CSV_BATCH)) {
    operators.add(day.operator_id)
    // Exact sums as the days stream by (a large account's month need not sit in memory).
    total = foldDays(period.start_date, total ? [total, day] : [day])
    rows.push({
      pay_period_id: period.id,
      account_id: auth.accountId,
      livemode: auth.livemode ? 1 : 0,
      operator_id: day.operator_id,
      date: day.date,
      pay_rule_id: day.pay_rule_id,
      counted_ms: day.countedMs,
      pending_ms: day.pendingMs,
      rejected_ms: day.rejectedMs,
      regular_ms: day.regularMs,
      overtime_ms: day.overtimeMs,
      double_time_ms: day.doubleTimeMs,
      auto_break_ms: day.autoBreakMs,
      sessions: day.sessions,
      open_sessions: day.openSessions,
      missed_break: day.missedBreak ? 1 : 0,
      pending_review: day.pendingReview ? 1 : 0,
    })
    if (rows.length >= CSV_BATCH) {
      await insertClosedDays(trx, rows)
      rows = []
    }
  }
  await insertClosedDays(trx, rows)
  const hours = payHours(total ?? foldDays(period.start_date, []))
  return {
    operators: operators.size,
    hours: hours.hours,
    regular_hours: hours.regular_hours,
    overtime_hours: hours.overtime_hours,
    double_time_hours: hours.double_time_hours,
    auto_break_hours: hours.auto_break_hours,
  }
}

/** Reopening a period discards what its close stored: its dates compute from sessions again. */
export function discardClosedTimesheet(trx: Trx, periodId: string): Promise<void> {
  return deleteClosedDays(trx, periodId)
}

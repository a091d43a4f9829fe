import type { PayRule } from '../../../packages/client/src/client.js'

/** A pay rule's terms as a manager reads them: hours rather than the API's minutes, modes in words. */

export type Weekday = PayRule['workweek_start']
export type RoundingMode = PayRule['rounding']['check_in']
export type BreakAction = PayRule['breaks'][number]['action']

export const WEEKDAYS: Array<[Weekday, string]> = [
  ['monday', 'Monday'],
  ['tuesday', 'Tuesday'],
  ['wednesday', 'Wednesday'],
  ['thursday', 'Thursday'],
  ['friday', 'Friday'],
  ['saturday', 'Saturday'],
  ['sunday', 'Sunday'],
]

/** The API's rounding steps (each divides an hour); 0 rounds nothing. */
export const ROUNDING_INTERVALS = [0, 1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60] as const

export const ROUNDING_MODES: Array<[RoundingMode, string]> = [
  ['nearest', 'to the nearest'],
  ['up', 'up'],
  ['down', 'down'],
]

export const BREAK_ACTIONS: Array<[BreakAction, string]> = [
  ['deduct', 'deduct the shortfall'],
  ['flag', 'flag the day (deduct nothing)'],
]

const label = <T extends string>(table: Array<[T, string]>, value: T) =>
  table.find(([key]) => key === value)?.[1] ?? value

export const weekdayName = (day: Weekday) => label(WEEKDAYS, day)

/** 480 → "8 h", 450 → "7.5 h", 20 → "0.33 h": thresholds are set in minutes and read in hours. */
export function hoursOf(minutes: number): string {
  return `${Number((minutes / 60).toFixed(2))} h`
}

export function roundingText(rounding: PayRule['rounding']): string {
  if (rounding.interval_minutes === 0) return 'None'
  const modes =
    rounding.check_in === rounding.check_out
      ? `both ${label(ROUNDING_MODES, rounding.check_in)}`
      : `in ${label(ROUNDING_MODES, rounding.check_in)}, out ${label(ROUNDING_MODES, rounding.check_out)}`
  return `${rounding.interval_minutes} min, ${modes}`
}

/** "After 5 h: 30 min, flagged if missing". */
export function breakRuleText(rule: PayRule['breaks'][number]): string {
  const action = rule.action === 'deduct' ? 'deducted if missing' : 'flagged if missing'
  return `After ${hoursOf(rule.after_minutes)}: ${rule.minutes} min, ${action}`
}

/** Each threshold that is on, in hours; "None" when all are off. */
export function overtimeTexts(overtime: PayRule['overtime']): string[] {
  const texts: string[] = []
  if (overtime.daily_minutes !== null) texts.push(`Daily over ${hoursOf(overtime.daily_minutes)}`)
  if (overtime.daily_double_minutes !== null)
    texts.push(`Double time over ${hoursOf(overtime.daily_double_minutes)}`)
  if (overtime.weekly_minutes !== null) texts.push(`Weekly over ${hoursOf(overtime.weekly_minutes)}`)
  if (overtime.seventh_day) texts.push('Seventh day')
  return texts.length === 0 ? ['None'] : texts
}

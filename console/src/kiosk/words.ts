import type { Scan } from './api.js'

/** What a scan did, in the large type the worker reads from a step away. */
export function resultWord(result: Scan['result']): string {
  switch (result) {
    case 'checked_in':
      return 'IN'
    case 'checked_out':
      return 'OUT'
    case 'break_started':
      return 'BREAK'
    case 'break_ended':
      return 'BREAK OVER'
    case 'flagged':
      return 'NOT RECORDED'
  }
}

/** A flag as the worker at the gate should read it: plain words and what to do. */
const FLAG_WORDS: Record<NonNullable<Scan['flag_reason']>, string> = {
  duplicate_scan: 'Already recorded a moment ago.',
  inactive_operator: 'This badge is not active. Ask your manager.',
  no_open_session: 'You were not checked in.',
  already_checked_in: 'You are already checked in.',
  invalid_time_range: 'That time cannot be recorded. Ask your manager.',
  max_shift_exceeded: 'Your last shift was left open too long and was closed. Ask your manager.',
  period_closed: 'That pay period is closed. Ask your manager.',
  out_of_order: 'Recorded out of order. Ask your manager to check your times.',
  no_open_break: 'No break was going on.',
  break_in_progress: 'A break is already going on.',
  too_many_breaks: 'No more breaks in this shift.',
}

export const flagWords = (reason: Scan['flag_reason']) => (reason ? FLAG_WORDS[reason] : undefined)

/** "1 scan", "3 scans". */
export const scans = (n: number) => `${n} ${n === 1 ? 'scan' : 'scans'}`

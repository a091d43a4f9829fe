import type { ApplyFailure, ApplyResult } from './apply.js'
import type { Action, FieldChange, Plan } from './plan.js'
import { characters } from './roster.js'

/** A value as the table shows it: strings quoted (so `"null"` and null differ), null and booleans bare. */
export function formatValue(value: string | boolean | null | undefined): string {
  if (typeof value === 'string') return JSON.stringify(value)
  return String(value ?? null)
}

function formatChange(change: FieldChange): string {
  return change.from === undefined
    ? `${change.field} ${formatValue(change.to)}`
    : `${change.field} ${formatValue(change.from)} → ${formatValue(change.to)}`
}

export function formatChanges(action: Action): string {
  const text = action.changes.map(formatChange).join(', ')
  return action.kind === 'deactivate' && action.line === null ? `${text} (not in the roster)` : text
}

/** Left-aligned columns separated by two spaces; columns listed in `right` are right-aligned. */
export function alignColumns(rows: readonly string[][], right: readonly number[] = []): string[] {
  const widths: number[] = []
  for (const row of rows) {
    row.forEach((cell, at) => {
      widths[at] = Math.max(widths[at] ?? 0, characters(cell))
    })
  }
  return rows.map((row) =>
    row
      .map((cell, at) => {
        const pad = ' '.repeat((widths[at] ?? 0) - characters(cell))
        if (right.includes(at)) return pad + cell
        return at === row.length - 1 ? cell : cell + pad
      })
      .join('  ')
      .trimEnd(),
  )
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`
}

/** The plan as the dry run prints it: one aligned row per action, then the count per action. */
export function formatPlan(plan: Plan): string {
  const lines: string[] = []
  if (plan.actions.length > 0) {
    const rows = [
      ['ACTION', 'IDENT', 'LINE', 'CHANGES'],
      ...plan.actions.map((action) => [
        action.kind,
        action.ident,
        action.line === null ? '-' : String(action.line),
        formatChanges(action),
      ]),
    ]
    lines.push(...alignColumns(rows), '')
  }
  const counts: [string, number][] = [
    ['create', plan.counts.create],
    ['update', plan.counts.update],
    ['reactivate', plan.counts.reactivate],
    ['deactivate', plan.counts.deactivate],
    ['unchanged', plan.unchanged],
  ]
  if (plan.kept > 0) counts.push(['kept (not in the roster, --no-deactivate)', plan.kept])
  if (plan.skippedInactive > 0)
    counts.push(['skipped (inactive in the roster, unknown to the service)', plan.skippedInactive])
  lines.push(
    ...alignColumns(
      counts.map(([label, count]) => [label, String(count)]),
      [1],
    ),
  )
  lines.push(`${plural(plan.actions.length, 'change')} planned (dry run: nothing was changed)`)
  return `${lines.join('\n')}\n`
}

/** The end of a real run: the changes made and the count per outcome. */
export function formatSummary(plan: Plan, result: ApplyResult): string {
  const made =
    result.succeeded.create +
    result.succeeded.update +
    result.succeeded.reactivate +
    result.succeeded.deactivate
  const counts: [string, number][] = [
    ['created', result.succeeded.create],
    ['updated', result.succeeded.update],
    ['deactivated', result.succeeded.deactivate],
    ['reactivated', result.succeeded.reactivate],
    ['unchanged', plan.unchanged],
    ['failed', result.failures.length],
  ]
  if (result.notStarted > 0) counts.push(['not started (interrupted)', result.notStarted])
  if (plan.kept > 0) counts.push(['kept (not in the roster, --no-deactivate)', plan.kept])
  if (plan.skippedInactive > 0)
    counts.push(['skipped (inactive in the roster, unknown to the service)', plan.skippedInactive])
  const lines = alignColumns(
    counts.map(([label, count]) => [label, String(count)]),
    [1],
  )
  return `${[...lines, `${plural(made, 'change')}${made === 0 && plan.actions.length === 0 ? ': the service already matches the roster' : ''}`].join('\n')}\n`
}

/** An error as one line: the API's status, code (or type), message, parameter and request id. */
export function describeError(error: unknown): string {
  if (typeof error !== 'object' || error === null) return String(error)
  const e = error as {
    status?: unknown
    type?: unknown
    code?: unknown
    param?: unknown
    requestId?: unknown
    message?: unknown
  }
  const message = typeof e.message === 'string' ? e.message : String(error)
  if (typeof e.status !== 'number') return message
  const kind =
    typeof e.code === 'string' && e.code !== '' ? e.code : typeof e.type === 'string' ? e.type : 'error'
  const param = typeof e.param === 'string' && e.param !== '' ? ` (param ${e.param})` : ''
  const request = typeof e.requestId === 'string' && e.requestId !== '' ? ` [request ${e.requestId}]` : ''
  return `${e.status} ${kind}: ${message}${param}${request}`
}

export function formatFailure(failure: ApplyFailure): string {
  const { action } = failure
  const where = action.line === null ? 'not in the roster' : `line ${action.line}`
  return `failed: ${action.kind} ${action.ident} (${where}): ${describeError(failure.error)}`
}

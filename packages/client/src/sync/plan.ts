import { createHash } from 'node:crypto'
import type { RosterRow } from './roster.js'

/** What the plan needs to know of an operator in the service (the API's Operator has more). */
export interface CurrentOperator {
  id: string
  ident: string
  name: string | null
  employee_id: string | null
  is_active: boolean
}

export type ActionKind = 'create' | 'update' | 'reactivate' | 'deactivate'
export const ACTION_KINDS: readonly ActionKind[] = ['create', 'update', 'reactivate', 'deactivate']

export type Field = 'name' | 'employee_id' | 'is_active'

/** One field an action changes; `from` is undefined for a create (the operator does not exist yet). */
export interface FieldChange {
  field: Field
  from?: string | boolean | null
  to: string | boolean | null
}

export interface CreateAction {
  kind: 'create'
  ident: string
  /** The roster line the action comes from. */
  line: number
  body: { ident: string; name: string | null; employee_id: string | null }
  /** Derived from the roster content for this ident, so a create retried after a crash never duplicates. */
  idempotencyKey: string
  changes: FieldChange[]
}

export interface PatchAction {
  kind: 'update' | 'reactivate' | 'deactivate'
  ident: string
  /** The roster line, or null for an operator absent from the roster. */
  line: number | null
  operatorId: string
  /** The PATCH body: only the fields that change. */
  patch: { name?: string | null; employee_id?: string | null; is_active?: boolean }
  changes: FieldChange[]
}

export type Action = CreateAction | PatchAction

export interface Plan {
  /** Creates, then updates, reactivations and deactivations; roster order within each, then by ident. */
  actions: Action[]
  counts: Record<ActionKind, number>
  /** Roster rows that need no change. */
  unchanged: number
  /** Active operators absent from the roster, kept because deactivation is off. */
  kept: number
  /** Rows marked inactive whose ident the service does not know: nothing to deactivate, nothing created. */
  skippedInactive: number
}

export interface PlanOptions {
  /** Deactivate active operators absent from the roster (default true). */
  deactivateMissing?: boolean
}

/**
 * The deterministic Idempotency-Key of the create of a roster row: the same ident, name and
 * employee_id always give the same key, and different content never does.
 */
export function createIdempotencyKey(row: Pick<RosterRow, 'ident' | 'name' | 'employee_id'>): string {
  const digest = createHash('sha256')
    .update(`attendance-sync:create:${JSON.stringify([row.ident, row.name, row.employee_id])}`)
    .digest('hex')
  return `attendance-sync-${digest}`
}

/**
 * Computes what makes the service mirror the roster. Pure: the same roster and the same service
 * state always give the same plan, so re-running after any interruption plans exactly what is left.
 *
 * - absent from the service and active in the roster: create
 * - absent from the service and inactive in the roster: nothing (nothing to deactivate)
 * - name or employee_id differ: update (in the same PATCH as a reactivation or deactivation)
 * - inactive in the service, active in the roster: reactivate
 * - active in the service, inactive in the roster: deactivate
 * - active in the service, absent from the roster: deactivate, unless `deactivateMissing` is false
 */
export function planSync(
  rows: readonly RosterRow[],
  operators: Iterable<CurrentOperator>,
  options: PlanOptions = {},
): Plan {
  const deactivateMissing = options.deactivateMissing ?? true
  const byIdent = new Map<string, CurrentOperator>()
  for (const operator of operators) if (!byIdent.has(operator.ident)) byIdent.set(operator.ident, operator)

  const actions: Action[] = []
  let unchanged = 0
  let skippedInactive = 0
  const inRoster = new Set<string>()
  for (const row of rows) {
    inRoster.add(row.ident)
    const current = byIdent.get(row.ident)
    if (!current) {
      if (!row.active) {
        skippedInactive++
        continue
      }
      const body = { ident: row.ident, name: row.name, employee_id: row.employee_id }
      actions.push({
        kind: 'create',
        ident: row.ident,
        line: row.line,
        body,
        idempotencyKey: createIdempotencyKey(row),
        changes: [
          { field: 'name', to: row.name },
          { field: 'employee_id', to: row.employee_id },
        ],
      })
      continue
    }
    const patch: PatchAction['patch'] = {}
    const changes: FieldChange[] = []
    if (current.name !== row.name) {
      patch.name = row.name
      changes.push({ field: 'name', from: current.name, to: row.name })
    }
    if (current.employee_id !== row.employee_id) {
      patch.employee_id = row.employee_id
      changes.push({ field: 'employee_id', from: current.employee_id, to: row.employee_id })
    }
    let kind: PatchAction['kind'] = 'update'
    if (current.is_active !== row.active) {
      patch.is_active = row.active
      changes.push({ field: 'is_active', from: current.is_active, to: row.active })
      kind = row.active ? 'reactivate' : 'deactivate'
    }
    if (changes.length === 0) unchanged++
    else actions.push({ kind, ident: row.ident, line: row.line, operatorId: current.id, patch, changes })
  }

  let kept = 0
  const absent = [...byIdent.values()]
    .filter((operator) => operator.is_active && !inRoster.has(operator.ident))
    .sort((a, b) => compare(a.ident, b.ident))
  for (const operator of absent) {
    if (!deactivateMissing) {
      kept++
      continue
    }
    actions.push({
      kind: 'deactivate',
      ident: operator.ident,
      line: null,
      operatorId: operator.id,
      patch: { is_active: false },
      changes: [{ field: 'is_active', from: true, to: false }],
    })
  }

  const order = (action: Action) => ACTION_KINDS.indexOf(action.kind)
  // A stable sort: roster order is kept within a kind, and absent operators (already sorted) come last.
  actions.sort((a, b) => order(a) - order(b))
  const counts = { create: 0, update: 0, reactivate: 0, deactivate: 0 }
  for (const action of actions) counts[action.kind]++
  return { actions, counts, unchanged, kept, skippedInactive }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

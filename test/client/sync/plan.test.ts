import { describe, expect, it } from 'vitest'
import { formatPlan, formatSummary } from '../../../packages/client/src/sync/format.js'
import {
  type CurrentOperator,
  createIdempotencyKey,
  planSync,
} from '../../../packages/client/src/sync/plan.js'
import type { RosterRow } from '../../../packages/client/src/sync/roster.js'

let nextLine = 2
function row(ident: string, name: string | null, employee_id: string | null, active = true): RosterRow {
  return { line: nextLine++, ident, name, employee_id, active }
}
function op(
  ident: string,
  name: string | null,
  employee_id: string | null,
  is_active = true,
): CurrentOperator {
  return { id: `op_${ident}`, ident, name, employee_id, is_active }
}

describe('planSync', () => {
  it('plans nothing when the service matches the roster', () => {
    const plan = planSync(
      [row('a', 'A', 'HR-1'), row('b', null, null), row('c', 'C', null, false)],
      [op('a', 'A', 'HR-1'), op('b', null, null), op('c', 'C', null, false)],
    )
    expect(plan.actions).toEqual([])
    expect(plan.counts).toEqual({ create: 0, update: 0, reactivate: 0, deactivate: 0 })
    expect(plan.unchanged).toBe(3)
  })

  it('creates the missing, with a deterministic idempotency key of the roster content', () => {
    nextLine = 2
    const plan = planSync([row('a', 'A', 'HR-1'), row('b', null, null)], [])
    expect(plan.actions).toEqual([
      {
        kind: 'create',
        ident: 'a',
        line: 2,
        body: { ident: 'a', name: 'A', employee_id: 'HR-1' },
        idempotencyKey: createIdempotencyKey({ ident: 'a', name: 'A', employee_id: 'HR-1' }),
        changes: [
          { field: 'name', to: 'A' },
          { field: 'employee_id', to: 'HR-1' },
        ],
      },
      {
        kind: 'create',
        ident: 'b',
        line: 3,
        body: { ident: 'b', name: null, employee_id: null },
        idempotencyKey: createIdempotencyKey({ ident: 'b', name: null, employee_id: null }),
        changes: [
          { field: 'name', to: null },
          { field: 'employee_id', to: null },
        ],
      },
    ])
    expect(plan.counts.create).toBe(2)
  })

  it('derives one key per roster content: same content same key, any difference another key', () => {
    const key = createIdempotencyKey({ ident: 'a', name: 'b:c', employee_id: null })
    expect(key).toBe(createIdempotencyKey({ ident: 'a', name: 'b:c', employee_id: null }))
    expect(key).toMatch(/^attendance-sync-[0-9a-f]{64}$/)
    const others = [
      { ident: 'a:b', name: 'c', employee_id: null },
      { ident: 'a', name: 'b:c', employee_id: '' },
      { ident: 'a', name: null, employee_id: 'b:c' },
      { ident: 'a', name: 'null', employee_id: null },
      { ident: 'A', name: 'b:c', employee_id: null },
    ]
    const keys = new Set([key, ...others.map(createIdempotencyKey)])
    expect(keys.size).toBe(others.length + 1)
  })

  it('renames and relinks in one PATCH of only the changed fields', () => {
    const plan = planSync(
      [row('a', 'New', 'HR-1'), row('b', 'B', 'HR-9'), row('c', 'C2', null), row('d', null, 'HR-4')],
      [op('a', 'Old', 'HR-1'), op('b', 'B', 'HR-2'), op('c', 'C', 'HR-3'), op('d', 'D', 'HR-4')],
    )
    expect(plan.actions.map((a) => [a.kind, a.ident, 'patch' in a ? a.patch : null])).toEqual([
      ['update', 'a', { name: 'New' }],
      ['update', 'b', { employee_id: 'HR-9' }],
      ['update', 'c', { name: 'C2', employee_id: null }],
      ['update', 'd', { name: null }],
    ])
    expect(plan.actions[2]?.changes).toEqual([
      { field: 'name', from: 'C', to: 'C2' },
      { field: 'employee_id', from: 'HR-3', to: null },
    ])
  })

  it('reactivates returned operators, with any attribute change in the same PATCH', () => {
    const plan = planSync(
      [row('a', 'A', null), row('b', 'B2', null)],
      [op('a', 'A', null, false), op('b', 'B', null, false)],
    )
    expect(plan.actions.map((a) => [a.kind, a.ident, 'patch' in a ? a.patch : null])).toEqual([
      ['reactivate', 'a', { is_active: true }],
      ['reactivate', 'b', { name: 'B2', is_active: true }],
    ])
    expect(plan.counts).toEqual({ create: 0, update: 0, reactivate: 2, deactivate: 0 })
  })

  it('deactivates rows marked inactive; renames an inactive one; creates nothing for an unknown inactive row', () => {
    const plan = planSync(
      [
        row('a', 'A', null, false),
        row('b', 'B2', null, false),
        row('c', 'C2', null, false),
        row('x', 'X', null, false),
      ],
      [op('a', 'A', null), op('b', 'B', null), op('c', 'C', null, false)],
    )
    expect(plan.actions.map((a) => [a.kind, a.ident, 'patch' in a ? a.patch : null])).toEqual([
      ['update', 'c', { name: 'C2' }],
      ['deactivate', 'a', { is_active: false }],
      ['deactivate', 'b', { name: 'B2', is_active: false }],
    ])
    expect(plan.skippedInactive).toBe(1)
    expect(plan.unchanged).toBe(0)
  })

  it('deactivates active operators absent from the roster (not the inactive ones), or keeps them', () => {
    const rows = [row('a', null, null)]
    const operators = [
      op('a', null, null),
      op('z', null, null),
      op('m', null, null),
      op('gone', null, null, false),
    ]
    const plan = planSync(rows, operators)
    expect(plan.actions).toEqual([
      {
        kind: 'deactivate',
        ident: 'm',
        line: null,
        operatorId: 'op_m',
        patch: { is_active: false },
        changes: [{ field: 'is_active', from: true, to: false }],
      },
      expect.objectContaining({ kind: 'deactivate', ident: 'z', line: null }),
    ])
    expect(plan.unchanged).toBe(1)

    const keep = planSync(rows, operators, { deactivateMissing: false })
    expect(keep.actions).toEqual([])
    expect(keep.kept).toBe(2)
  })

  it('orders creates, updates, reactivations, deactivations; roster order within each', () => {
    const plan = planSync(
      [
        row('d1', null, null, false),
        row('c1', 'x', null),
        row('u1', 'new', null),
        row('r1', null, null),
        row('c2', null, null),
      ],
      [op('d1', null, null), op('u1', 'old', null), op('r1', null, null, false), op('absent', null, null)],
    )
    expect(plan.actions.map((a) => `${a.kind}:${a.ident}`)).toEqual([
      'create:c1',
      'create:c2',
      'update:u1',
      'reactivate:r1',
      'deactivate:d1',
      'deactivate:absent',
    ])
  })

  it('is pure: the same input gives the same plan', () => {
    const rows = [row('a', 'A', 'HR-1'), row('b', 'B', null, false)]
    const operators = [op('b', 'B', null), op('c', null, null)]
    expect(planSync(rows, operators)).toEqual(planSync(rows, operators))
  })
})

describe('format', () => {
  it('prints the plan as an aligned table with old → new values and a count per action', () => {
    nextLine = 2
    const plan = planSync(
      [
        row('W-1', 'Ada', 'HR-1'),
        row('W-22', 'Bob Jr', null),
        row('W-3', null, null, false),
        row('W-4', 'Di', null),
      ],
      [
        op('W-22', 'Bob', 'HR-2'),
        op('W-3', null, null),
        op('W-4', 'Di', null, false),
        op('W-9', 'Old', null),
      ],
    )
    expect(formatPlan(plan)).toBe(
      [
        'ACTION      IDENT  LINE  CHANGES',
        'create      W-1    2     name "Ada", employee_id "HR-1"',
        'update      W-22   3     name "Bob" → "Bob Jr", employee_id "HR-2" → null',
        'reactivate  W-4    5     is_active false → true',
        'deactivate  W-3    4     is_active true → false',
        'deactivate  W-9    -     is_active true → false (not in the roster)',
        '',
        'create      1',
        'update      1',
        'reactivate  1',
        'deactivate  2',
        'unchanged   0',
        '5 changes planned (dry run: nothing was changed)',
        '',
      ].join('\n'),
    )
  })

  it('prints the summary of a run', () => {
    const plan = planSync([row('a', null, null)], [op('a', null, null)])
    expect(
      formatSummary(plan, {
        succeeded: { create: 0, update: 0, reactivate: 0, deactivate: 0 },
        failures: [],
        notStarted: 0,
      }),
    ).toBe(
      [
        'created      0',
        'updated      0',
        'deactivated  0',
        'reactivated  0',
        'unchanged    1',
        'failed       0',
        '0 changes: the service already matches the roster',
        '',
      ].join('\n'),
    )
  })
})

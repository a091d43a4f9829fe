import { errors } from '../../core/errors.js'
import type { AuthContext } from '../../core/identity.js'
import { toFlag } from '../../db/schema.js'
import type { Executor, Trx } from '../../db/types.js'
import { changedFields } from '../../lib/changes.js'
import { clock } from '../../lib/clock.js'
import { recordEvent } from '../events/outbox.js'
import { resolveReference } from '../shared/references.js'
import {
  createResource,
  listService,
  lockResource,
  type ResourceStore,
  retrieveResource,
  updateResource,
} from '../shared/resources.js'
import {
  deletePayRuleRow,
  findPayRule,
  insertPayRule,
  listAllPayRuleRows,
  listPayRuleRows,
  lockDefaultPayRule,
  lockPayRulesById,
  type PayRuleRow,
  toPayRule,
  unsetDefaultPayRule,
  updatePayRuleRow,
} from './repository.js'
import type { CreatePayRuleBody, PayRule, UpdatePayRuleBody } from './schemas.js'

export type { PayRule, PayRuleRow }

const payRules: ResourceStore<PayRuleRow, PayRule> = {
  name: 'pay_rule',
  prefix: 'pr',
  find: findPayRule,
  insert: insertPayRule,
  write: updatePayRuleRow,
  toApi: toPayRule,
}

/** The columns of a rule's terms, as a create or PATCH body gives them. */
type Terms = Omit<
  PayRuleRow,
  'id' | 'account_id' | 'livemode' | 'name' | 'is_default' | 'created_at' | 'updated_at'
>

/** A rule with nothing set: no rounding, no break rules, no overtime (the spec's defaults). */
const DEFAULT_TERMS: Terms = {
  workweek_start: 'monday',
  rounding_interval_minutes: 0,
  rounding_check_in: 'nearest',
  rounding_check_out: 'nearest',
  breaks: '[]',
  overtime_daily_minutes: null,
  overtime_daily_double_minutes: null,
  overtime_weekly_minutes: null,
  overtime_seventh_day: 0,
}

/**
 * The terms a body sets, over `base`: `rounding` and `overtime` change the fields they name and
 * keep the others (so a PATCH of one threshold leaves the rest), `breaks` replaces the list.
 */
function termsOf(input: CreatePayRuleBody | UpdatePayRuleBody, base: Terms): Terms {
  const { rounding, overtime } = input
  return {
    workweek_start: input.workweek_start ?? base.workweek_start,
    rounding_interval_minutes: rounding?.interval_minutes ?? base.rounding_interval_minutes,
    rounding_check_in: rounding?.check_in ?? base.rounding_check_in,
    rounding_check_out: rounding?.check_out ?? base.rounding_check_out,
    // Stored in the API's key order, whatever the body's: an unchanged list is then no change, and
    // events show it as the API does.
    breaks:
      input.breaks === undefined
        ? base.breaks
        : JSON.stringify(
            input.breaks.map(({ after_minutes, minutes, action }) => ({ after_minutes, minutes, action })),
          ),
    overtime_daily_minutes:
      overtime?.daily_minutes === undefined ? base.overtime_daily_minutes : overtime.daily_minutes,
    overtime_daily_double_minutes:
      overtime?.daily_double_minutes === undefined
        ? base.overtime_daily_double_minutes
        : overtime.daily_double_minutes,
    overtime_weekly_minutes:
      overtime?.weekly_minutes === undefined ? base.overtime_weekly_minutes : overtime.weekly_minutes,
    overtime_seventh_day:
      overtime?.seventh_day === undefined ? base.overtime_seventh_day : toFlag(overtime.seventh_day),
  }
}

/**
 * The rules between fields, on the terms as they will be stored (after a PATCH, the merged ones):
 * double time starts after overtime, and the seventh-day rule splits by the daily threshold.
 */
function checkOvertime(terms: Terms): void {
  const daily = terms.overtime_daily_minutes
  const double = terms.overtime_daily_double_minutes
  if (double !== null && (daily === null || double <= daily)) {
    throw errors.invalidValue(
      'overtime.daily_double_minutes',
      'overtime.daily_double_minutes needs overtime.daily_minutes and must be greater than it.',
    )
  }
  if (terms.overtime_seventh_day === 1 && daily === null) {
    throw errors.invalidValue(
      'overtime.seventh_day',
      'overtime.seventh_day: true needs overtime.daily_minutes.',
    )
  }
}

/**
 * Makes room for a new default: the account and mode's current one (unless it is `keepId`) stops
 * being it, with its `pay_rule.updated` event, in the caller's transaction. Under the default lock,
 * so two rules made default at once take turns.
 */
async function unsetPreviousDefault(trx: Trx, auth: AuthContext, keepId?: string): Promise<void> {
  await lockDefaultPayRule(trx, auth)
  const now = clock.now()
  for (const row of await unsetDefaultPayRule(trx, auth, keepId, now)) {
    const after = toPayRule({ ...row, is_default: 0, updated_at: now })
    await recordEvent(trx, auth, 'pay_rule.updated', after, { previousAttributes: { is_default: true } })
  }
}

export async function createPayRule(trx: Trx, auth: AuthContext, input: CreatePayRuleBody): Promise<PayRule> {
  const terms = termsOf(input, DEFAULT_TERMS)
  checkOvertime(terms)
  const isDefault = input.is_default === true
  if (isDefault) await unsetPreviousDefault(trx, auth)
  return createResource(
    trx,
    auth,
    payRules,
    { name: input.name, is_default: toFlag(isDefault), ...terms },
    'pay_rule.created',
  )
}

export function retrievePayRule(db: Executor, auth: AuthContext, id: string): Promise<PayRule> {
  return retrieveResource(db, auth, payRules, id)
}

export const listPayRules = listService(listPayRuleRows, toPayRule)

/** Every rule of the caller's account and mode (a few): what a timesheet applies to its operators. */
export async function listAllPayRules(db: Executor, auth: AuthContext): Promise<PayRule[]> {
  return (await listAllPayRuleRows(db, auth)).map(toPayRule)
}

export async function updatePayRule(
  trx: Trx,
  auth: AuthContext,
  id: string,
  input: UpdatePayRuleBody,
): Promise<PayRule> {
  // Before the rule's own row is locked: a rollback (404, a refused term) undoes this as well.
  if (input.is_default === true) await unsetPreviousDefault(trx, auth, id)
  return updateResource(trx, auth, payRules, id, {
    changes: (current) =>
      changedFields(current, {
        name: input.name,
        is_default: input.is_default === undefined ? undefined : toFlag(input.is_default),
        ...termsOf(input, current),
      }),
    check: checkOvertime,
    event: 'pay_rule.updated',
  })
}

/**
 * Deletes the rule, unless an operator uses it (409 `pay_rule_in_use`: assign the operators another
 * rule, or none, first). `operatorUsing` is the operators module's look-up, handed in by the route:
 * operators refer to rules (their service resolves `pay_rule_id` here), so this module imports
 * nothing of theirs. The rule is locked first, and an assignment locks the rule it resolves, so a
 * rule cannot be assigned while it is deleted.
 */
export async function deletePayRule(
  trx: Trx,
  auth: AuthContext,
  id: string,
  operatorUsing: (db: Executor, auth: AuthContext, payRuleId: string) => Promise<string | undefined>,
) {
  const current = await lockResource(trx, auth, payRules, id)
  const operatorId = await operatorUsing(trx, auth, id)
  if (operatorId !== undefined) throw errors.payRuleInUse(id, operatorId)
  await deletePayRuleRow(trx, id)
  await recordEvent(trx, auth, 'pay_rule.deleted', toPayRule(current))
  return { object: 'pay_rule' as const, id, deleted: true as const }
}

/**
 * Resolves an operator's `pay_rule_id` (422 `unknown_pay_rule`, `cross_mode_reference`); the rule
 * stays locked until the transaction ends, so `deletePayRule` cannot remove it underneath.
 */
export async function resolvePayRule(trx: Trx, auth: AuthContext, id: string): Promise<PayRuleRow> {
  return resolveReference(auth, {
    resource: 'pay rule',
    param: 'pay_rule_id',
    value: id,
    lookup: (owner) => lockPayRulesById(trx, owner, id),
    unknown: errors.unknownPayRule,
  })
}

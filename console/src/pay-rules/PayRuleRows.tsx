import { useState } from 'preact/hooks'
import type { PayRule } from '../../../packages/client/src/client.js'
import type { Problem } from '../api.js'
import { Badge } from '../components/Badge.js'
import { Confirm } from '../components/Confirm.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { useSignedIn } from '../context.js'
import { useAction } from '../hooks.js'
import { Link } from '../router.js'
import { PayRuleForm } from './PayRuleForm.js'
import { breakRuleText, overtimeTexts, roundingText, weekdayName } from './terms.js'

/** The row's columns: the detail row under it spans them all. */
export const PAY_RULE_COLUMNS = 6

/** A list of a rule's terms, one a line (none is said in a word). */
function Terms({ texts }: { texts: string[] }) {
  return (
    <ul class="terms">
      {texts.map((text) => (
        <li key={text}>{text}</li>
      ))}
    </ul>
  )
}

/**
 * A refusal of the row's actions; a delete refused because an operator still has the rule says
 * what to do first.
 */
function Refusal({ error }: { error: Problem | undefined }) {
  if (error?.code !== 'pay_rule_in_use') return <ErrorNotice error={error} />
  return (
    <div class="notice notice-error" role="alert">
      <p>This rule cannot be deleted: an operator still has it. {error.message}</p>
      <p>
        Give its operators another rule (or the account default) on the <Link to="/operators">Operators</Link>{' '}
        page, then delete it.
      </p>
    </div>
  )
}

type Opened = 'edit' | 'delete' | undefined

/**
 * A rule's row (its terms in words and hours, its actions), and under it, on request, its form, the
 * question before deleting it, or the API's refusal.
 */
export function PayRuleRows({
  rule,
  onChanged,
  onDeleted,
}: {
  rule: PayRule
  onChanged: (rule: PayRule) => void
  onDeleted: () => void
}) {
  const { api, can } = useSignedIn()
  const edits = can('timesheets:write')
  const action = useAction()
  const [opened, setOpened] = useState<Opened>()
  const makeDefault = () =>
    action.run(async () => onChanged(await api.payRules.update(rule.id, { is_default: true })))
  const remove = () =>
    action.run(async () => {
      await api.payRules.del(rule.id)
      onDeleted()
    })
  const breaks = rule.breaks.map(breakRuleText)
  return (
    <>
      <tr>
        <td>
          {rule.name} {rule.is_default && <Badge tone="good">default</Badge>}
        </td>
        <td>{weekdayName(rule.workweek_start)}</td>
        <td>{roundingText(rule.rounding)}</td>
        <td>
          <Terms texts={breaks.length === 0 ? ['None'] : breaks} />
        </td>
        <td>
          <Terms texts={overtimeTexts(rule.overtime)} />
        </td>
        {edits && (
          <td>
            <div class="actions">
              <button
                type="button"
                class="secondary"
                aria-expanded={opened === 'edit'}
                aria-label={`Edit ${rule.name}`}
                onClick={() => setOpened(opened === 'edit' ? undefined : 'edit')}
              >
                Edit
              </button>
              {!rule.is_default && (
                <button
                  type="button"
                  class="secondary"
                  disabled={action.pending}
                  aria-label={`Make default: ${rule.name}`}
                  onClick={makeDefault}
                >
                  Make default
                </button>
              )}
              <button
                type="button"
                class="secondary"
                aria-expanded={opened === 'delete'}
                aria-label={`Delete ${rule.name}`}
                onClick={() => setOpened('delete')}
              >
                Delete
              </button>
            </div>
          </td>
        )}
      </tr>
      {(opened || action.error) && (
        <tr class="row-detail">
          <td colSpan={PAY_RULE_COLUMNS}>
            {opened === 'edit' && (
              <PayRuleForm
                form={`rule-${rule.id}`}
                rule={rule}
                submitLabel={`Save ${rule.name}`}
                save={async (body) => {
                  onChanged(await api.payRules.update(rule.id, body))
                  setOpened(undefined)
                }}
                onCancel={() => setOpened(undefined)}
              />
            )}
            {opened === 'delete' && (
              <Confirm
                question={`Delete the pay rule ${rule.name}?`}
                action="Delete the rule"
                pending={action.pending}
                onConfirm={async () => {
                  await remove()
                  setOpened(undefined)
                }}
                onCancel={() => setOpened(undefined)}
              >
                <p>
                  Timesheets will no longer count by it, except those of closed pay periods, which keep what
                  they stored.
                  {rule.is_default &&
                    ' It is the default: operators without a rule of their own will have none.'}
                </p>
              </Confirm>
            )}
            {opened !== 'edit' && <Refusal error={action.error} />}
          </td>
        </tr>
      )}
    </>
  )
}

import { useState } from 'preact/hooks'
import type { Operator, PayRule } from '../../../packages/client/src/client.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { SelectField } from '../components/Field.js'
import { useSignedIn } from '../context.js'
import { type Loaded, useAction, useLoad } from '../hooks.js'

/** The account's pay rules, read once for a page's operators. */
export function usePayRules(): Loaded<PayRule[]> {
  const { api } = useSignedIn()
  // The first 200 rules fill the menus; an account has a handful.
  return useLoad(async () => (await api.payRules.list({ limit: 200 })).data, [api])
}

/** What an operator without a rule of its own is counted by: the default, else nothing. */
function fallbackText(rules: PayRule[]): string {
  const fallback = rules.find((rule) => rule.is_default)
  return fallback ? `Account default: ${fallback.name}` : 'None'
}

/**
 * An operator's pay rule, set or cleared in place (`PATCH pay_rule_id`): its own rule by name, else
 * the account default the timesheet falls back to (or none). Until the rules are read, or when the
 * key may not read them, the operator's rule is named by its id. Read-only without `operators:write`.
 */
export function OperatorPayRule({
  operator,
  rules,
  onChanged,
}: {
  operator: Operator
  rules: PayRule[] | undefined
  onChanged: (operator: Operator) => void
}) {
  const { api, can } = useSignedIn()
  const action = useAction()
  const own = operator.pay_rule_id
  const known = rules ?? []
  // The menu keeps the manager's choice while it is saved (else it snaps back to the stored rule until
  // the answer comes); refused, it shows the stored rule again beside the refusal.
  const [chosen, setChosen] = useState<string | undefined>(undefined)
  const choose = (value: string) => {
    setChosen(value)
    return action.run(async () =>
      onChanged(await api.operators.update(operator.id, { pay_rule_id: value || null })),
    )
  }
  const options: ReadonlyArray<readonly [string, string]> = [
    ['', rules === undefined ? '—' : fallbackText(known)],
    ...(own !== null && !known.some((rule) => rule.id === own) ? [[own, own] as const] : []),
    ...known.map((rule) => [rule.id, rule.name] as const),
  ]
  // One who may not change operators reads the rule where the menu would be.
  if (!can('operators:write')) return <>{options.find(([id]) => id === (own ?? ''))?.[1] ?? own}</>
  return (
    <>
      <SelectField
        inline
        label={`Pay rule of ${operator.ident}`}
        value={action.pending && chosen !== undefined ? chosen : (own ?? '')}
        onValue={choose}
        options={options}
        disabled={action.pending || rules === undefined}
      />
      <ErrorNotice error={action.error} />
    </>
  )
}

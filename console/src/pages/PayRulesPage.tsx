import { useState } from 'preact/hooks'
import type { PayRule } from '../../../packages/client/src/client.js'
import { PagedTable } from '../components/PagedTable.js'
import { PageTitle } from '../components/PageTitle.js'
import { useSignedIn } from '../context.js'
import { usePagedList } from '../hooks.js'
import { PayRuleForm } from '../pay-rules/PayRuleForm.js'
import { PayRuleRows } from '../pay-rules/PayRuleRows.js'

/**
 * The account's pay rules: how timesheets round check-ins and check-outs, deduct or flag missing
 * breaks and split hours into regular, overtime and double time. Create, edit, make one the
 * default (the rule of every operator without one of its own), delete.
 */
export function PayRulesPage() {
  const { api, can } = useSignedIn()
  const edits = can('timesheets:write')
  // A new or deleted rule changes the list: it is read again.
  const [version, setVersion] = useState(0)
  const [creating, setCreating] = useState(false)
  const list = usePagedList((cursor) => api.payRules.list({ limit: 50, cursor }), [api, version])
  // Making a rule the default unsets the previous one, as the API did.
  const changed = (rule: PayRule) => {
    if (rule.is_default) {
      for (const other of list.items) {
        if (other.is_default && other.id !== rule.id) list.replace({ ...other, is_default: false })
      }
    }
    list.replace(rule)
  }
  return (
    <>
      <PageTitle>Pay rules</PageTitle>
      <p class="muted">
        A timesheet counts each operator's sessions by the operator's pay rule, else the default rule, else by
        none (raw hours, all regular). Recorded times never change: rounding and deductions exist only in
        timesheets.
      </p>
      {creating ? (
        <section aria-labelledby="new-rule-heading">
          <h2 id="new-rule-heading">New pay rule</h2>
          <PayRuleForm
            form="rule-new"
            submitLabel="Create pay rule"
            save={async (body) => {
              await api.payRules.create(body)
              setCreating(false)
              setVersion((n) => n + 1)
            }}
            onCancel={() => setCreating(false)}
          />
        </section>
      ) : (
        edits && (
          <button type="button" onClick={() => setCreating(true)}>
            New pay rule
          </button>
        )
      )}
      <PagedTable
        list={list}
        class="pay-rules"
        caption="Pay rules, newest first"
        noun={['pay rule']}
        empty="No pay rule yet: timesheets count raw hours, all regular."
        head={
          <>
            <th scope="col">Name</th>
            <th scope="col">Workweek starts</th>
            <th scope="col">Rounding</th>
            <th scope="col">Breaks</th>
            <th scope="col">Overtime</th>
            {edits && <th scope="col">Actions</th>}
          </>
        }
      >
        {list.items.map((rule) => (
          <PayRuleRows
            key={rule.id}
            rule={rule}
            onChanged={changed}
            onDeleted={() => setVersion((n) => n + 1)}
          />
        ))}
      </PagedTable>
    </>
  )
}

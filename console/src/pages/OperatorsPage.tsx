import { useEffect, useState } from 'preact/hooks'
import { AttendanceApiError, type Operator, type PayRule } from '../../../packages/client/src/client.js'
import { Badge } from '../components/Badge.js'
import { Confirm } from '../components/Confirm.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { Field, SelectField } from '../components/Field.js'
import { PagedTable } from '../components/PagedTable.js'
import { PageTitle } from '../components/PageTitle.js'
import { useSignedIn } from '../context.js'
import { count } from '../format.js'
import { useAction, useLoad, usePagedList, useReturnFocus } from '../hooks.js'
import { OperatorPayRule, usePayRules } from '../pay-rules/OperatorPayRule.js'

type ActiveFilter = '' | 'true' | 'false'

const ACTIVE_OPTIONS: ReadonlyArray<readonly [ActiveFilter, string]> = [
  ['', 'All'],
  ['true', 'Active'],
  ['false', 'Inactive'],
]

function matches(operator: Operator, search: string): boolean {
  const needle = search.trim().toLowerCase()
  return (
    needle === '' ||
    operator.ident.toLowerCase().includes(needle) ||
    (operator.name ?? '').toLowerCase().includes(needle)
  )
}

/** Deactivate is the API's soft delete (DELETE); reactivate is PATCH is_active: true (docs/operators.md). */
function ActivationButton({ operator, onChanged }: { operator: Operator; onChanged: (o: Operator) => void }) {
  const { api } = useSignedIn()
  const action = useAction()
  const toggle = () =>
    action.run(async () =>
      onChanged(
        operator.is_active
          ? await api.operators.del(operator.id)
          : await api.operators.update(operator.id, { is_active: true }),
      ),
    )
  const verb = operator.is_active ? 'Deactivate' : 'Reactivate'
  return (
    <>
      <button
        type="button"
        class="secondary"
        onClick={toggle}
        disabled={action.pending}
        aria-label={`${verb} ${operator.ident}`}
      >
        {verb}
      </button>
      <ErrorNotice error={action.error} />
    </>
  )
}

/** What the API takes as a PIN (decisions.md, "Operator PINs"); the page refuses anything else before sending. */
const PIN_FORMAT = /^\d{4,8}$/

/**
 * A new PIN for an operator, typed masked and sent once (`PATCH pin`): the page never shows a PIN, and
 * the input is emptied as soon as the API has it. The page checks the format first; a refusal of the
 * API is shown under the input as well.
 */
function PinForm({
  operator,
  onSaved,
  onCancel,
}: {
  operator: Operator
  onSaved: (operator: Operator) => void
  onCancel: () => void
}) {
  const { api } = useSignedIn()
  const action = useAction()
  const [pin, setPin] = useState('')
  const [invalid, setInvalid] = useState(false)
  const id = `pin-${operator.id}`
  // Opened to type a PIN: the input takes the focus.
  useEffect(() => document.getElementById(id)?.focus(), [id])
  const submit = (event: Event) => {
    event.preventDefault()
    if (!PIN_FORMAT.test(pin)) {
      setInvalid(true)
      // Back to the input that is wrong, whose message is read with it.
      document.getElementById(id)?.focus()
      return
    }
    setInvalid(false)
    return action.run(async () => {
      const saved = await api.operators.update(operator.id, { pin })
      setPin('')
      onSaved(saved)
    })
  }
  const refused = action.error instanceof AttendanceApiError && action.error.param === 'pin'
  return (
    <form class="filters" onSubmit={submit} aria-label={`PIN of ${operator.ident}`}>
      <Field
        id={id}
        label={`New PIN for ${operator.ident} (4 to 8 digits)`}
        type="password"
        inputMode="numeric"
        autoComplete="new-password"
        maxLength={8}
        value={pin}
        onValue={(typed) => {
          setPin(typed)
          setInvalid(false)
        }}
        error={
          invalid ? 'A PIN is 4 to 8 digits, nothing else.' : refused ? action.error?.message : undefined
        }
      />
      <div class="actions">
        <button type="submit" disabled={action.pending}>
          Save PIN
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
      {!refused && <ErrorNotice error={action.error} />}
    </form>
  )
}

type PinDetail = 'set' | 'clear' | undefined

/**
 * An operator's row, and under it, on request, the form that sets its PIN or the question before
 * clearing it. Whether it has a PIN is all the API says of it (`has_pin`).
 */
function OperatorRows({
  operator,
  rules,
  onChanged,
}: {
  operator: Operator
  rules: PayRule[] | undefined
  onChanged: (o: Operator) => void
}) {
  const { api, can } = useSignedIn()
  const edits = can('operators:write')
  const clear = useAction()
  const [detail, setDetail] = useState<PinDetail>()
  const [said, setSaid] = useState<string>()
  // Closing the form or the question puts the focus back on Set (or Change), which is always there.
  const setButton = useReturnFocus<HTMLButtonElement>()
  const close = () => {
    setDetail(undefined)
    setButton.returnFocus()
  }
  const changed = (updated: Operator, words: string) => {
    onChanged(updated)
    close()
    setSaid(words)
  }
  const open = (next: PinDetail) => {
    setSaid(undefined)
    setDetail(next)
  }
  const clearPin = () =>
    clear.run(async () =>
      changed(await api.operators.update(operator.id, { pin: null }), `PIN of ${operator.ident} cleared.`),
    )
  return (
    <>
      <tr>
        <td>{operator.ident}</td>
        <td>{operator.name ?? '—'}</td>
        <td>{operator.employee_id ?? '—'}</td>
        <td>
          {operator.is_active ? <Badge tone="good">active</Badge> : <Badge tone="neutral">inactive</Badge>}
        </td>
        <td>
          <OperatorPayRule operator={operator} rules={rules} onChanged={onChanged} />
        </td>
        <td>
          <div class="actions">
            {operator.has_pin ? <Badge tone="good">set</Badge> : <Badge tone="neutral">none</Badge>}
            {edits && (
              <button
                ref={setButton.ref}
                type="button"
                class="secondary"
                aria-expanded={detail === 'set'}
                onClick={() => open('set')}
                aria-label={`${operator.has_pin ? 'Change' : 'Set'} the PIN of ${operator.ident}`}
              >
                {operator.has_pin ? 'Change' : 'Set'}
              </button>
            )}
            {edits && operator.has_pin && (
              <button
                type="button"
                class="secondary"
                aria-expanded={detail === 'clear'}
                onClick={() => open('clear')}
                aria-label={`Clear the PIN of ${operator.ident}`}
              >
                Clear
              </button>
            )}
          </div>
          {said && (
            <p class="muted" role="status">
              {said}
            </p>
          )}
        </td>
        {edits && (
          <td>
            <ActivationButton operator={operator} onChanged={onChanged} />
          </td>
        )}
      </tr>
      {detail && (
        <tr class="row-detail">
          <td colSpan={7}>
            {detail === 'set' ? (
              <PinForm
                operator={operator}
                onSaved={(saved) => changed(saved, `PIN of ${operator.ident} saved.`)}
                onCancel={close}
              />
            ) : (
              <Confirm
                question={`Clear the PIN of ${operator.ident}?`}
                action="Clear the PIN"
                pending={clear.pending}
                onConfirm={clearPin}
                onCancel={close}
              >
                <p>Devices that require a PIN then refuse this operator's scans until a new PIN is set.</p>
              </Confirm>
            )}
            <ErrorNotice error={clear.error} />
          </td>
        </tr>
      )}
    </>
  )
}

/**
 * What the search found, in words. Names and parts of idents are matched among the operators loaded
 * so far; while more exist, the words say so, rather than that nobody matches.
 */
function searchSummary(search: string, found: number, loaded: number, hasMore: boolean): string | undefined {
  if (search === '') return undefined
  const among = hasMore
    ? ` among the ${count(loaded, 'operator')} loaded; load more to search the rest.`
    : '.'
  return found === 0
    ? `No operator matches “${search}”${among}`
    : `${count(found, 'operator matches', 'operators match')} “${search}”${among}`
}

/**
 * The search box matches part of an ident or a name among the pages loaded so far; an exact ident is
 * also asked of the API (its `ident` filter), so it is found even when it is not loaded yet.
 */
export function OperatorsPage() {
  const { api, can } = useSignedIn()
  const [search, setSearch] = useState('')
  const [active, setActive] = useState<ActiveFilter>('')
  const isActive = active === '' ? undefined : active === 'true'
  const list = usePagedList(
    (cursor) => api.operators.list({ is_active: isActive, limit: 50, cursor }),
    [api, active],
  )
  const trimmed = search.trim()
  const exact = useLoad(
    async () =>
      trimmed === '' ? [] : (await api.operators.list({ ident: trimmed, is_active: isActive })).data,
    [api, trimmed, active],
  )
  const rules = usePayRules()
  const shown = list.items.filter((operator) => matches(operator, search))
  const extra = (exact.value ?? []).filter((found) => !shown.some((operator) => operator.id === found.id))
  const rows = [...extra, ...shown]
  const onChanged = (operator: Operator) => {
    list.replace(operator)
    if (extra.some((found) => found.id === operator.id)) exact.set([operator])
  }

  return (
    <>
      <PageTitle>Operators</PageTitle>
      <form class="filters" onSubmit={(event) => event.preventDefault()}>
        <Field
          id="operator-search"
          label="Search by ident or name"
          type="search"
          value={search}
          onValue={setSearch}
        />
        <SelectField
          id="operator-active"
          label="Status"
          value={active}
          onValue={setActive}
          options={ACTIVE_OPTIONS}
        />
      </form>
      {/* The exact ident is refused as the list is (a missing scope): the table's notice says it once.
          The pay rules need timesheets:read, which a key may lack while it reads operators. */}
      {!list.error && <ErrorNotice error={exact.error ?? rules.error} />}
      <PagedTable
        list={list}
        caption="Operators, newest first"
        noun={['operator']}
        empty="No operator yet."
        summary={searchSummary(trimmed, rows.length, list.items.length, list.hasMore)}
        head={
          <>
            <th scope="col">Ident</th>
            <th scope="col">Name</th>
            <th scope="col">Employee id</th>
            <th scope="col">Status</th>
            <th scope="col">Pay rule</th>
            <th scope="col">PIN</th>
            {can('operators:write') && <th scope="col">Action</th>}
          </>
        }
      >
        {rows.map((operator) => (
          <OperatorRows key={operator.id} operator={operator} rules={rules.value} onChanged={onChanged} />
        ))}
      </PagedTable>
    </>
  )
}

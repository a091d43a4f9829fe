import { ErrorNotice } from '../components/ErrorNotice.js'
import { useSignedIn } from '../context.js'
import { useAction } from '../hooks.js'
import { saveFile } from '../save-file.js'
import type { TimesheetQuery } from './totals.js'

/** The API's own CSV of the timesheet (`Accept: text/csv`), every row of it, saved as a file. */
export function CsvDownload({ query }: { query: TimesheetQuery }) {
  const { api } = useSignedIn()
  const action = useAction()
  const download = () =>
    action.run(async () => {
      const { blob, filename } = await api.csv('/v1/timesheets', query)
      saveFile(blob, filename ?? `timesheet-${query.from}-${query.to}.csv`)
    })
  return (
    <>
      <button type="button" onClick={download} disabled={action.pending}>
        {action.pending ? 'Downloading…' : 'Download CSV'}
      </button>
      <ErrorNotice error={action.error} />
    </>
  )
}

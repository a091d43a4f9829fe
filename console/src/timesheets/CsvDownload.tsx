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
      const csv = await api.timesheets.csv(query)
      const filename = /filename="([^"]+)"/.exec(csv.headers.get('content-disposition') ?? '')?.[1]
      // The answer's headers go with its body, so the file has its Content-Type.
      const blob = await new Response(csv.body, { headers: csv.headers }).blob()
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

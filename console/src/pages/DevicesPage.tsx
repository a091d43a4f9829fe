import { useState } from 'preact/hooks'
import { PagedTable } from '../components/PagedTable.js'
import { PageTitle } from '../components/PageTitle.js'
import { useSignedIn } from '../context.js'
import { DeviceRows } from '../devices/DeviceRows.js'
import { NewDeviceForm } from '../devices/NewDeviceForm.js'
import { useNow, usePagedList } from '../hooks.js'

/**
 * The account's devices (the time clocks at its gates): add one, pair a tablet with a code, unpair
 * it, and whether its scans need the operator's PIN (decisions.md, "The time clock").
 */
export function DevicesPage() {
  const { api, can } = useSignedIn()
  const [created, setCreated] = useState(0)
  const list = usePagedList((cursor) => api.devices.list({ limit: 50, cursor }), [api, created])
  // "Last seen 3 minutes ago" moves on while the page is open.
  const now = useNow(30_000)
  return (
    <>
      <PageTitle>Devices</PageTitle>
      <p class="muted">
        A device is a time clock: a tablet at a gate running the kiosk page, paired with a code made here. A
        paired device's key can only scan at that device.
      </p>
      {can('devices:write') && <NewDeviceForm onCreated={() => setCreated((n) => n + 1)} />}
      <PagedTable
        list={list}
        caption="Devices, newest first"
        noun={['device']}
        empty="No device yet."
        head={
          <>
            <th scope="col">Device</th>
            <th scope="col">Location</th>
            <th scope="col">Status</th>
            <th scope="col">Last seen</th>
            <th scope="col">PIN required</th>
            {can('devices:write') && <th scope="col">Actions</th>}
          </>
        }
      >
        {list.items.map((device) => (
          <DeviceRows key={device.id} device={device} now={now} onChanged={list.replace} />
        ))}
      </PagedTable>
    </>
  )
}

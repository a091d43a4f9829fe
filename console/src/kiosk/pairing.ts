/**
 * The device's pairing as the page sees it (`usePairing`). It owns: which screen the pairing allows
 * (`Phase`: starting, the pairing form, scanning, unpaired), the key and device code that pairing left
 * in storage, the device as last read (`GET /v1/devices/current`, kept for offline starts) with the
 * service's clock synced to it, and pairing with a code. It does not own the scan queue
 * (`scan-queue.ts`), nor when the device is read again or the queue flushed (`Kiosk.tsx` composes both).
 */
import { useCallback, useState } from 'preact/hooks'
import { type CurrentDevice, currentDevice, KioskApiError, pair as pairWithCode, Unreachable } from './api.js'
import type { ServiceClock } from './clock.js'
import { readSetting, writeSetting } from './storage.js'

/** What pairing left in storage: the device key and the device it scans for. */
export interface Pairing {
  secret: string
  deviceCode: string
}

export type Phase = 'loading' | 'pairing' | 'idle' | 'unpaired'

export interface DevicePairing {
  phase: Phase
  pairing: Pairing | undefined
  /** The device as last read, or as kept from the last time while the service does not answer. */
  current: CurrentDevice | undefined
  /**
   * The device, its location, whether it requires PINs, the PIN key and the service's clock; while
   * offline (or refused but for a 401) the copy kept from the last time serves. False when the key
   * was refused (401): the device was unpaired.
   */
  refresh: (key: string) => Promise<boolean>
  /**
   * On load: the pairing kept in storage and the device as last kept, then read again. Undefined
   * when the tablet was never paired (the pairing form shows).
   */
  restore: () => Promise<Pairing | undefined>
  /** Pairs with the code the manager read out: the pairing kept, or what the pairing form says. */
  pair: (code: string) => Promise<Pairing | string>
  /** The key was refused (401): the pairing form shows, saying so. */
  unpaired: () => void
}

export function usePairing(clock: ServiceClock): DevicePairing {
  const [phase, setPhase] = useState<Phase>('loading')
  const [pairing, setPairing] = useState<Pairing>()
  const [current, setCurrent] = useState<CurrentDevice>()

  const unpaired = useCallback(() => setPhase('unpaired'), [])

  const refresh = useCallback(
    async (key: string): Promise<boolean> => {
      const sentAt = performance.now()
      try {
        const device = await currentDevice(key)
        await clock.sync(device.server_time, sentAt, performance.now())
        await writeSetting('current', device)
        setCurrent(device)
        setPhase('idle')
      } catch (error) {
        if (error instanceof KioskApiError && error.status === 401) {
          setPhase('unpaired')
          return false
        }
        if (!(error instanceof Unreachable || error instanceof KioskApiError)) throw error
      }
      return true
    },
    [clock],
  )

  const restore = useCallback(async (): Promise<Pairing | undefined> => {
    const stored = await readSetting<Pairing>('pairing')
    if (!stored) {
      setPhase('pairing')
      return undefined
    }
    setPairing(stored)
    const cached = await readSetting<CurrentDevice>('current')
    if (cached) {
      setCurrent(cached)
      setPhase('idle')
    }
    await refresh(stored.secret)
    setPhase((phase) => (phase === 'loading' ? 'idle' : phase))
    return stored
  }, [refresh])

  const pair = useCallback(
    async (code: string): Promise<Pairing | string> => {
      try {
        const paired = await pairWithCode(code)
        const stored = { secret: paired.key.secret, deviceCode: paired.device.code }
        await writeSetting('pairing', stored)
        setPairing(stored)
        // Paired, even if the device could not be read just now: the 30 s tick reads it again.
        if (await refresh(stored.secret)) setPhase('idle')
        return stored
      } catch (error) {
        if (error instanceof Unreachable)
          return 'The service cannot be reached. Check the network and try again.'
        if (error instanceof KioskApiError) {
          return error.body.code === 'invalid_pairing_code'
            ? 'This code is unknown, used or expired. Make a new one on the device page of the console.'
            : error.body.message
        }
        throw error
      }
    },
    [refresh],
  )

  return { phase, pairing, current, refresh, restore, pair, unpaired }
}

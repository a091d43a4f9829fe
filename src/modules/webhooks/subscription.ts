import { errors } from '../../core/errors.js'
import { EVENT_TYPES, EVENT_TYPES_BY_RESOURCE } from '../events/types.js'

/** The event that send-test delivers; never dispatched to subscriptions. */
export const TEST_EVENT_TYPE = 'webhook_endpoint.test'

/** An endpoint receives an event whose type matches an entry exactly, as `<resource>.*`, or `*`. */
export function matchesSubscription(patterns: readonly string[], type: string): boolean {
  const resource = type.split('.')[0]
  return patterns.some((p) => p === '*' || p === type || p === `${resource}.*`)
}

/** Refuses an `enabled_events` entry that could never match, naming it (`enabled_events[2]`). */
export function checkEnabledEvents(patterns: readonly string[]): string[] {
  patterns.forEach((pattern, index) => {
    const known =
      pattern === '*' ||
      (EVENT_TYPES as string[]).includes(pattern) ||
      (pattern.endsWith('.*') && Object.hasOwn(EVENT_TYPES_BY_RESOURCE, pattern.slice(0, -2)))
    if (!known) {
      throw errors.invalidEventType(`enabled_events[${index}]`, pattern)
    }
  })
  return [...new Set(patterns)]
}

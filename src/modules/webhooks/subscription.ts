import { errors } from '../../core/errors.js'
import { EVENT_TYPES, EVENT_TYPES_BY_RESOURCE } from '../events/types.js'

/** The event that send-test delivers; never dispatched to subscriptions. */
export const TEST_EVENT_TYPE = 'webhook_endpoint.test'
/** Emitted when the service auto-disables an endpoint; never delivered to that endpoint. */
export const ENDPOINT_DISABLED_EVENT_TYPE = 'webhook_endpoint.disabled'

/** An endpoint receives an event whose type matches an entry exactly, as `<resource>.*`, or `*`. */
export function matchesSubscription(patterns: readonly string[], type: string): boolean {
  const resource = type.split('.')[0]
  return patterns.some((p) => p === '*' || p === type || p === `${resource}.*`)
}

export interface Subscriber {
  id: string
  account_id: string
  livemode: number
  created_at: number
  /** The parsed `enabled_events`. */
  patterns: readonly string[]
}

export interface SubscribedEvent {
  account_id: string
  livemode: number
  type: string
  created_at: number
  /** For `webhook_endpoint.disabled`: the endpoint it describes. */
  subjectEndpointId?: string | undefined
}

/**
 * Whether an endpoint gets a delivery of an event: the dispatcher and recover both ask this, so
 * the two never disagree. Same account and mode; an event of the endpoint's creation millisecond
 * or later (events are matched when dispatched, which may be after an endpoint created meanwhile:
 * an event that happened before the endpoint existed is not its business); its `enabled_events`;
 * never the news of its own disablement; never a send-test event (those have their one delivery).
 */
export function receives(endpoint: Subscriber, event: SubscribedEvent): boolean {
  return (
    endpoint.account_id === event.account_id &&
    endpoint.livemode === event.livemode &&
    event.created_at >= endpoint.created_at &&
    event.type !== TEST_EVENT_TYPE &&
    !(event.type === ENDPOINT_DISABLED_EVENT_TYPE && event.subjectEndpointId === endpoint.id) &&
    matchesSubscription(endpoint.patterns, event.type)
  )
}

/** The endpoint a `webhook_endpoint.disabled` envelope describes (its `data.object.id`). */
export function subjectEndpointIdOf(payload: string): string | undefined {
  const envelope = JSON.parse(payload) as { data?: { object?: { id?: unknown } } }
  const id = envelope.data?.object?.id
  return typeof id === 'string' ? id : undefined
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

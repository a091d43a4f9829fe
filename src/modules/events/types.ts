/**
 * The event types of the spec, by resource, and `webhook_endpoint.disabled` (the service disabled an
 * endpoint: docs/webhooks.md); `webhook_endpoint.test` is only ever sent by send-test.
 */
export const EVENT_TYPES_BY_RESOURCE = {
  session: ['session.completed', 'session.updated', 'session.deleted', 'session.flagged'],
  operator: ['operator.created', 'operator.updated', 'operator.deactivated'],
  device: ['device.created', 'device.updated', 'device.deleted'],
  location: ['location.created', 'location.updated', 'location.deleted'],
  scan: ['scan.checked_in', 'scan.checked_out', 'scan.break_started', 'scan.break_ended', 'scan.flagged'],
  webhook_endpoint: ['webhook_endpoint.disabled'],
  pay_period: ['pay_period.created', 'pay_period.closed', 'pay_period.reopened'],
  pay_rule: ['pay_rule.created', 'pay_rule.updated', 'pay_rule.deleted'],
} as const

export type EventResource = keyof typeof EVENT_TYPES_BY_RESOURCE
export type EventType = (typeof EVENT_TYPES_BY_RESOURCE)[EventResource][number]

export const EVENT_TYPES: EventType[] = Object.values(EVENT_TYPES_BY_RESOURCE).flat()

/** The version every event envelope carries. */
export const API_VERSION = '2026-11-22'

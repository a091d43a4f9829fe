import type { VNode } from 'preact'
import type { NavItem } from './components/Layout.js'
import { DevicesPage } from './pages/DevicesPage.js'
import { HomePage } from './pages/HomePage.js'
import { OperatorsPage } from './pages/OperatorsPage.js'
import { PayPeriodsPage } from './pages/PayPeriodsPage.js'
import { PayRulesPage } from './pages/PayRulesPage.js'
import { ReviewQueuePage } from './pages/ReviewQueuePage.js'
import { SessionDetailPage } from './pages/SessionDetailPage.js'
import { SessionsPage } from './pages/SessionsPage.js'
import { TimesheetsPage } from './pages/TimesheetsPage.js'
import { WebhookDeliveriesPage } from './webhooks/WebhookDeliveriesPage.js'
import { WebhookEndpointsPage } from './webhooks/WebhookEndpointsPage.js'

export interface Page {
  /** A path under /console; `:name` segments are passed to `render`. */
  pattern: string
  render: (params: Record<string, string>) => VNode
}

/**
 * Every page of the console. A new page is one entry here (and one in NAV if it has a menu entry).
 * `/` (the address `/console/`) is the home page, the first one shown after signing in.
 */
export const PAGES: Page[] = [
  { pattern: '/', render: () => <HomePage /> },
  { pattern: '/sessions', render: () => <SessionsPage /> },
  { pattern: '/sessions/:id', render: ({ id = '' }) => <SessionDetailPage id={id} /> },
  { pattern: '/review', render: () => <ReviewQueuePage /> },
  { pattern: '/timesheets', render: () => <TimesheetsPage /> },
  { pattern: '/pay-periods', render: () => <PayPeriodsPage /> },
  { pattern: '/pay-rules', render: () => <PayRulesPage /> },
  { pattern: '/operators', render: () => <OperatorsPage /> },
  { pattern: '/devices', render: () => <DevicesPage /> },
  { pattern: '/webhooks', render: () => <WebhookEndpointsPage /> },
  { pattern: '/webhooks/:id', render: ({ id = '' }) => <WebhookDeliveriesPage endpointId={id} /> },
]

export const NAV: NavItem[] = [
  { to: '/', label: 'Home' },
  { to: '/review', label: 'Review' },
  { to: '/sessions', label: 'Sessions' },
  { to: '/timesheets', label: 'Timesheets' },
  { to: '/pay-periods', label: 'Pay periods' },
  { to: '/pay-rules', label: 'Pay rules' },
  { to: '/operators', label: 'Operators' },
  { to: '/devices', label: 'Devices' },
  { to: '/webhooks', label: 'Webhooks' },
]

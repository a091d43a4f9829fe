import type { VNode } from 'preact'
import type { NavItem } from './components/Layout.js'
import { OperatorsPage } from './pages/OperatorsPage.js'
import { ReviewQueuePage } from './pages/ReviewQueuePage.js'
import { SessionDetailPage } from './pages/SessionDetailPage.js'
import { SessionsPage } from './pages/SessionsPage.js'
import { TimesheetsPage } from './pages/TimesheetsPage.js'
import { WebhookDeliveriesPage } from './pages/WebhookDeliveriesPage.js'
import { WebhookEndpointsPage } from './pages/WebhookEndpointsPage.js'

export interface Page {
  /** A path under /console; `:name` segments are passed to `render`. */
  pattern: string
  render: (params: Record<string, string>) => VNode
}

/** Every page of the console. A new page is one entry here (and one in NAV if it has a menu entry). */
export const PAGES: Page[] = [
  { pattern: '/sessions', render: () => <SessionsPage /> },
  { pattern: '/sessions/:id', render: ({ id = '' }) => <SessionDetailPage id={id} /> },
  { pattern: '/review', render: () => <ReviewQueuePage /> },
  { pattern: '/timesheets', render: () => <TimesheetsPage /> },
  { pattern: '/operators', render: () => <OperatorsPage /> },
  { pattern: '/webhooks', render: () => <WebhookEndpointsPage /> },
  { pattern: '/webhooks/:id', render: ({ id = '' }) => <WebhookDeliveriesPage endpointId={id} /> },
]

export const NAV: NavItem[] = [
  { to: '/sessions', label: 'Sessions' },
  { to: '/review', label: 'Review' },
  { to: '/timesheets', label: 'Timesheets' },
  { to: '/operators', label: 'Operators' },
  { to: '/webhooks', label: 'Webhooks' },
]

/** Where `/console/` leads. */
export const HOME = '/sessions'

import type { VNode } from 'preact'
import type { Scope } from './access.js'
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
import { ApiKeysPage } from './people/ApiKeysPage.js'
import { MyAccountPage } from './people/MyAccountPage.js'
import { UsersPage } from './people/UsersPage.js'
import { WebhookDeliveriesPage } from './webhooks/WebhookDeliveriesPage.js'
import { WebhookEndpointsPage } from './webhooks/WebhookEndpointsPage.js'

export interface Page {
  /** A path under /console; `:name` segments are passed to `render`. */
  pattern: string
  render: (params: Record<string, string>) => VNode
  /**
   * The scope without which the page reads nothing: it is neither in the menu nor shown to one who
   * lacks it (access.ts). `person` for a page of the signed-in person (My account), which a key has not.
   */
  needs?: Scope | 'person'
}

/**
 * Every page of the console. A new page is one entry here (and one in NAV if it has a menu entry).
 * `/` (the address `/console/`) is the home page, the first one shown after signing in.
 */
export const PAGES: Page[] = [
  { pattern: '/', render: () => <HomePage /> },
  { pattern: '/sessions', render: () => <SessionsPage />, needs: 'sessions:read' },
  {
    pattern: '/sessions/:id',
    render: ({ id = '' }) => <SessionDetailPage id={id} />,
    needs: 'sessions:read',
  },
  { pattern: '/review', render: () => <ReviewQueuePage />, needs: 'sessions:read' },
  { pattern: '/timesheets', render: () => <TimesheetsPage />, needs: 'timesheets:read' },
  { pattern: '/pay-periods', render: () => <PayPeriodsPage />, needs: 'timesheets:read' },
  { pattern: '/pay-rules', render: () => <PayRulesPage />, needs: 'timesheets:read' },
  { pattern: '/operators', render: () => <OperatorsPage />, needs: 'operators:read' },
  { pattern: '/devices', render: () => <DevicesPage />, needs: 'devices:read' },
  { pattern: '/webhooks', render: () => <WebhookEndpointsPage />, needs: 'webhooks:read' },
  {
    pattern: '/webhooks/:id',
    render: ({ id = '' }) => <WebhookDeliveriesPage endpointId={id} />,
    needs: 'webhooks:read',
  },
  { pattern: '/users', render: () => <UsersPage />, needs: 'users:read' },
  { pattern: '/api-keys', render: () => <ApiKeysPage />, needs: 'keys:read' },
  { pattern: '/my-account', render: () => <MyAccountPage />, needs: 'person' },
]

export const NAV: NavItem[] = [
  { to: '/', label: 'Home' },
  { to: '/review', label: 'Review', needs: 'sessions:read' },
  { to: '/sessions', label: 'Sessions', needs: 'sessions:read' },
  { to: '/timesheets', label: 'Timesheets', needs: 'timesheets:read' },
  { to: '/pay-periods', label: 'Pay periods', needs: 'timesheets:read' },
  { to: '/pay-rules', label: 'Pay rules', needs: 'timesheets:read' },
  { to: '/operators', label: 'Operators', needs: 'operators:read' },
  { to: '/devices', label: 'Devices', needs: 'devices:read' },
  { to: '/webhooks', label: 'Webhooks', needs: 'webhooks:read' },
  { to: '/users', label: 'Users', needs: 'users:read' },
  { to: '/api-keys', label: 'API keys', needs: 'keys:read' },
]

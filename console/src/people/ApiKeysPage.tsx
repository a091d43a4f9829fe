import { PageTitle } from '../components/PageTitle.js'

export function ApiKeysPage() {
  return <PageTitle>API keys</PageTitle>
}

import { PageTitle } from '../components/PageTitle.js'

export function UsersPage() {
  return <PageTitle>Users</PageTitle>
}

import type { Executor } from '../../db/types.js'

/** The person an OpenID Connect identity (`iss`, `sub`) is linked to. */
export async function findIdentityUserId(
  db: Executor,
  issuer: string,
  subject: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('sso_identities')
    .select('user_id')
    .where('issuer', '=', issuer)
    .where('subject', '=', subject)
    .executeTakeFirst()
  return row?.user_id
}

/**
 * Links an identity to a person. Two first sign-ins of one identity at once both try: the primary
 * key keeps one row, for the person the same e-mail named to both.
 */
export async function insertIdentity(
  db: Executor,
  row: { issuer: string; subject: string; user_id: string; created_at: number },
): Promise<void> {
  await db
    .insertInto('sso_identities')
    .values(row)
    .onConflict((oc) => oc.columns(['issuer', 'subject']).doNothing())
    .execute()
}

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { errors } from '../../core/errors.js'
import { IdParams, listEnvelope, ref } from '../../core/schemas.js'
import { requireAuth } from '../../http/auth.js'
import { errorResponses } from '../../http/schemas.js'
import { createMailer } from './mailer.js'
import {
  AuditEntry,
  CreateUserBody,
  ListAuditLogQuery,
  ListUsersQuery,
  UpdateUserBody,
  User,
  UserWithInviteUrl,
} from './schemas.js'
import {
  type Change,
  deactivateUser,
  inviteUser,
  listAuditLog,
  listUsers,
  mailInvitation,
  reactivateUser,
  reinviteUser,
  retrieveUser,
  signOutEverywhere,
  toAuditEntry,
  toUser,
  updateUser,
} from './service.js'

const tags = ['Users']

/**
 * The people of the request's account (decisions.md, "People and memberships") and its audit log.
 * Owners only: `users:*` is no key's scope and no other role's, and a person held to sites is
 * refused (`account-wide`).
 */
export function userRoutes(config: { publicUrl: string; smtpUrl: string | undefined; smtpFrom: string }) {
  return async (instance: FastifyInstance): Promise<void> => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>()
    const mailer = createMailer(config)
    instance.addHook('onClose', async () => mailer?.close())

    /** Who changes what, for the audit log: the signed-in person (only people hold `users:write`). */
    const changeBy = (request: FastifyRequest): Change => {
      if (!request.person) throw errors.authentication('Sign in first: only people manage people.')
      return { actor: { type: 'user', id: request.person.userId, name: request.person.name }, ip: request.ip }
    }

    /**
     * E-mails an invitation when SMTP_URL is set, after its commit and not awaited: the answer
     * carries the link whatever the mail server does, and a failure is logged without the link.
     */
    /**
     * E-mails an invitation when SMTP_URL is set, after its commit and not awaited: the answer
     * carries the link whatever the mail server does, and a failure is logged without the link.
     */
    const emailInvitation = (request: FastifyRequest, user: UserWithInviteUrl, change: Change) => {
      if (!mailer) return
      mailInvitation(app.db, mailer, requireAuth(request).accountId, user, change.actor).catch(
        (error: unknown) =>
          request.log.warn(
            { user_id: user.id, error: error instanceof Error ? error.message : String(error) },
            'the invitation could not be e-mailed; its link is in the answer',
          ),
      )
    }

    const write = { scope: 'users:write', sites: 'account-wide' } as const
    const read = { scope: 'users:read', sites: 'account-wide' } as const

    app.post(
      '/v1/users',
      {
        config: write,
        schema: {
          tags,
          summary: 'Invite a person to the account',
          description:
            "An invited membership, and the person when nobody has the e-mail yet (compared case-insensitively; a person who has a login keeps their name). The answer alone carries `invite_url`, the link the person accepts (single use, valid 7 days; e-mailed too when SMTP_URL is set). An e-mail with a membership here already: 409 `email_in_use`. `location_ids`: this account's locations, of either mode (an unknown one: 422 `unknown_location`; an empty list: 422 `invalid_value`). `operator_id`: an operator of the request's mode (422 `unknown_operator`, `cross_mode_reference`). Scope `users:write` (owners). Recorded in the audit log (`user_invited`).",
          'x-idempotent': true,
          body: CreateUserBody,
          response: {
            201: ref(UserWithInviteUrl, 'The invited user, with the link.'),
            ...errorResponses(409),
          },
        },
      },
      async (request, reply) => {
        const auth = requireAuth(request)
        const change = changeBy(request)
        const user = await app.creates.run(
          request,
          reply,
          (trx) => inviteUser(trx, auth, request.body, change, config.publicUrl),
          201,
          // The link's token is kept hashed only: a replay cannot show the link again.
          (invited) => ({ ...invited, invite_url: null }),
        )
        // A replay answers the stored invitation; it was e-mailed the first time.
        if (reply.getHeader('idempotent-replayed') === undefined) emailInvitation(request, user, change)
        return user
      },
    )

    app.get(
      '/v1/users',
      {
        config: read,
        schema: {
          tags,
          summary: "List the account's people, newest first",
          description: 'Every membership of the account, whatever its status; filter by `status` or `role`.',
          querystring: ListUsersQuery,
          response: { 200: listEnvelope(ref(User), 'A page of users, newest person first.') },
        },
      },
      (request) => {
        const auth = requireAuth(request)
        return app.paginator.page(
          'user',
          auth,
          request.query,
          (beforeId, take) => listUsers(app.db, auth, request.query, beforeId, take),
          toUser,
        )
      },
    )

    app.get(
      '/v1/users/:id',
      {
        config: read,
        schema: {
          tags,
          summary: 'Retrieve a user',
          params: IdParams,
          response: { 200: ref(User, 'The user.') },
        },
      },
      (request) => retrieveUser(app.db, requireAuth(request), request.params.id),
    )

    app.patch(
      '/v1/users/:id',
      {
        config: write,
        schema: {
          tags,
          summary: "Change a user's name, role, sites or worker record",
          description:
            "`name` is the person's, in every account. Your own role, sites or worker record: 403 `self_change`. Demoting the last active owner: 409 `last_owner`. Takes effect within 5 s. Recorded in the audit log (`user_updated`) when something changes.",
          params: IdParams,
          body: UpdateUserBody,
          response: { 200: ref(User, 'The user.'), ...errorResponses(409) },
        },
      },
      (request) =>
        app.db
          .transaction()
          .execute((trx) =>
            updateUser(trx, requireAuth(request), request.params.id, request.body, changeBy(request)),
          ),
    )

    const action = (
      verb: 'deactivate' | 'reactivate',
      run: typeof deactivateUser,
      summary: string,
      description: string,
    ) =>
      app.post(
        `/v1/users/:id/${verb}`,
        {
          config: write,
          schema: {
            tags,
            summary,
            description,
            params: IdParams,
            response: { 200: ref(User, 'The user.'), ...errorResponses(409) },
          },
        },
        (request) =>
          app.db
            .transaction()
            .execute((trx) => run(trx, requireAuth(request), request.params.id, changeBy(request))),
      )
    action(
      'deactivate',
      deactivateUser,
      'Deactivate a user',
      'The person can no longer act in this account (within 5 s); an open invitation stops working. When this was their last active membership, their sessions end. Yourself: 403 `self_change`; the last active owner: 409 `last_owner`. Deactivating a deactivated user changes nothing. Recorded in the audit log (`user_deactivated`).',
    )
    action(
      'reactivate',
      reactivateUser,
      'Reactivate a user',
      '`active` again, or `invited` when the person never signed in to this account (send a new link with `/invite`). Yourself: 403 `self_change`. Reactivating a user who is not deactivated changes nothing. Recorded in the audit log (`user_reactivated`).',
    )

    app.post(
      '/v1/users/:id/invite',
      {
        config: write,
        schema: {
          tags,
          summary: 'Make a new invitation link',
          description:
            'For an invited user only (409 `not_invited` otherwise): a new `invite_url` (valid 7 days), which voids the earlier link; e-mailed too when SMTP_URL is set. Recorded in the audit log (`user_invited`).',
          params: IdParams,
          response: { 200: ref(UserWithInviteUrl, 'The user, with the new link.'), ...errorResponses(409) },
        },
      },
      async (request) => {
        const change = changeBy(request)
        const user = await app.db
          .transaction()
          .execute((trx) =>
            reinviteUser(trx, requireAuth(request), request.params.id, change, config.publicUrl),
          )
        emailInvitation(request, user, change)
        return user
      },
    )

    app.post(
      '/v1/users/:id/sign-out-everywhere',
      {
        config: write,
        schema: {
          tags,
          summary: 'End every session of a user',
          description:
            'Every session of the person ends (their cookies stop working within 5 s, in every account); they sign in again. Scope `users:write`.',
          params: IdParams,
          response: { 200: ref(User, 'The user.') },
        },
      },
      (request) =>
        app.db
          .transaction()
          .execute((trx) => signOutEverywhere(trx, requireAuth(request), request.params.id)),
    )

    app.get(
      '/v1/audit-log',
      {
        config: read,
        schema: {
          tags: ['Audit log'],
          summary: "List the account's audit log, newest first",
          description:
            'Who did what to people and keys: sign-ins (and failed ones), sign-outs, passwords changed and reset, invitations, changes, deactivations and reactivations of users, keys created and revoked, SSO identities linked. Never a token, password or secret. Filter by `user_id` (the person as actor or target) and `type`. Scope `users:read` (owners).',
          querystring: ListAuditLogQuery,
          response: { 200: listEnvelope(ref(AuditEntry), 'A page of audit entries, newest first.') },
        },
      },
      (request) => {
        const auth = requireAuth(request)
        return app.paginator.page(
          'audit_entry',
          auth,
          request.query,
          (beforeId, take) => listAuditLog(app.db, auth, request.query, beforeId, take),
          toAuditEntry,
        )
      },
    )
  }
}

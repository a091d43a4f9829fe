import type { FastifyReply, FastifyRequest } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ApiError, errors } from '../../src/core/errors.js'
import type { AuthContext } from '../../src/core/identity.js'
import type { Trx } from '../../src/db/types.js'
import { CreateRunner } from '../../src/http/idempotency.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { uniq } from '../helpers/assertions.js'
import { insertOperatorRow } from '../helpers/fixtures.js'

/**
 * CreateRunner on its own, with creates that write and then fail: what a failed keyed create keeps
 * (nothing of the create; the refusal when it is stored) on either database, whether the key's
 * claim commits apart (PostgreSQL) or with the create (SQLite).
 */
describe('CreateRunner: a keyed create that fails after writing', () => {
  let t: TestApp
  let runner: CreateRunner
  let auth: AuthContext

  beforeAll(async () => {
    t = await buildTestApp()
    runner = new CreateRunner(t.db)
    const key = await t.key({ account: uniq('acct') })
    auth = { principalId: key.id, locationIds: null, accountId: key.account_id, livemode: false }
  })
  afterAll(() => t.close())

  function request(key: string, body: unknown): FastifyRequest {
    return { auth, headers: { 'idempotency-key': key }, method: 'POST', url: '/v1/things', body } as never
  }
  function reply() {
    const sent = { status: 0, headers: {} as Record<string, string> }
    const fake = {
      code(status: number) {
        sent.status = status
        return fake
      },
      header(name: string, value: string) {
        sent.headers[name] = value
        return fake
      },
    }
    return { reply: fake as unknown as FastifyReply, sent }
  }

  const writeOperator = (trx: Trx, ident: string) =>
    insertOperatorRow(trx, { id: `op_${ident}`, account_id: auth.accountId, ident })

  const operator = (ident: string) =>
    t.db.selectFrom('operators').select('id').where('ident', '=', ident).executeTakeFirst()
  const storedKey = (key: string) =>
    t.db
      .selectFrom('idempotency_keys')
      .select(['status', 'response_status'])
      .where('account_id', '=', auth.accountId)
      .where('key', '=', `${auth.principalId}:${key}`)
      .executeTakeFirst()

  it('a stored refusal keeps nothing the create wrote, and replays', async () => {
    const key = uniq('key')
    const ident = uniq('W')
    const first = reply()
    await expect(
      runner.run(request(key, { ident }), first.reply, async (trx) => {
        await writeOperator(trx, ident)
        throw errors.openSessionExists(ident)
      }),
    ).rejects.toMatchObject({ status: 409 })
    expect(await operator(ident)).toBeUndefined()
    expect(await storedKey(key)).toEqual({ status: 'done', response_status: 409 })

    const again = reply()
    const error = await runner
      .run(request(key, { ident }), again.reply, async () => {
        throw new Error('must not run: the refusal is replayed')
      })
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({ status: 409 })
    expect(again.sent.headers['idempotent-replayed']).toBe('true')
  })

  it('a validation_error or a 5xx keeps nothing and releases the key; a retry then creates', async () => {
    for (const failure of [errors.invalidValue('x', 'bad x'), new Error('boom')]) {
      const key = uniq('key')
      const ident = uniq('W')
      await expect(
        runner.run(request(key, { ident }), reply().reply, async (trx) => {
          await writeOperator(trx, ident)
          throw failure
        }),
      ).rejects.toBe(failure)
      expect(await operator(ident)).toBeUndefined()
      expect(await storedKey(key)).toBeUndefined()

      const retry = reply()
      const created = await runner.run(request(key, { ident }), retry.reply, async (trx) => {
        await writeOperator(trx, ident)
        return { id: `op_${ident}` }
      })
      expect(created).toEqual({ id: `op_${ident}` })
      expect(retry.sent.status).toBe(201)
      expect(await operator(ident)).toEqual({ id: `op_${ident}` })
      expect(await storedKey(key)).toEqual({ status: 'done', response_status: 201 })
    }
  })
})

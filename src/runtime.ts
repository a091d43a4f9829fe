import { buildApp } from './app.js'
import type { Config } from './config.js'
import { openServiceDatabase } from './db/connection.js'
import { migrateToLatest } from './db/migrate.js'
import { createRateLimitRedis } from './http/rate-limit.js'
import { type CreatedKey, countAccounts, createKey } from './modules/keys/service.js'

/**
 * Opens the database, migrates it and builds the app, as `npm start` and `cli serve` do. On an
 * empty database it creates the `default` account and one test key labelled `first key`, returned
 * for printing.
 */
export async function startApp(config: Config) {
  const { db } = openServiceDatabase(config)
  await migrateToLatest(db)
  let firstKey: CreatedKey | undefined
  if ((await countAccounts(db)) === 0)
    firstKey = await createKey(db, { account: 'default', mode: 'test', label: 'first key' })
  const redis = config.redisUrl ? createRateLimitRedis(config.redisUrl) : undefined
  const app = await buildApp({ config, db, redis })
  return { app, firstKey }
}

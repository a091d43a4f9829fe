import { Redis } from 'ioredis'

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

/**
 * A fresh ioredis client connected to the test Redis, or `undefined` when Redis does not answer,
 * so suites that need it can skip. With REQUIRE_REDIS=1 (as in CI) an unreachable Redis throws
 * instead: the tests that need it fail rather than silently skip. The caller owns the client
 * (an app built with it closes it).
 */
export async function connectTestRedis(): Promise<Redis | undefined> {
  let lastError: unknown
  const client = new Redis(REDIS_URL, {
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 1,
    // `connect()` rejects on the first failure; a dropped connection is retried a few times only.
    retryStrategy: (times) => (times > 3 ? null : 100),
  })
  const remember = (error: unknown) => {
    lastError = error
  }
  client.on('error', remember)
  try {
    await client.connect()
    await client.ping()
    client.off('error', remember)
    return client
  } catch (error) {
    client.disconnect()
    if (process.env.REQUIRE_REDIS === '1') {
      throw new Error(
        `REQUIRE_REDIS=1 but Redis at ${REDIS_URL} is not reachable: ${String(lastError ?? error)}`,
      )
    }
    return undefined
  }
}

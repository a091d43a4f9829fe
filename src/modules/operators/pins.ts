import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto'

/**
 * Operator PINs, stored only as a salted scrypt hash (`scrypt$<salt>$<hash>`, base64url). Node's
 * scrypt runs in the thread pool, so a check never blocks the event loop. The parameters are
 * scrypt's usual interactive ones (16 MiB, about 50 ms here): a 4-digit PIN falls to any offline
 * search anyway, so what protects it is the lockout after 5 wrong tries; the hash keeps a database
 * dump from listing the PINs at a glance.
 */
const PARAMS: ScryptOptions = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 }
const KEY_LENGTH = 32

function derive(pin: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(pin, salt, KEY_LENGTH, PARAMS, (error, key) => (error ? reject(error) : resolve(key))),
  )
}

export async function hashPin(pin: string): Promise<string> {
  const salt = randomBytes(16)
  return `scrypt$${salt.toString('base64url')}$${(await derive(pin, salt)).toString('base64url')}`
}

export async function pinMatches(pin: string, stored: string): Promise<boolean> {
  const [scheme, salt, hash] = stored.split('$')
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined) return false
  const expected = Buffer.from(hash, 'base64url')
  const actual = await derive(pin, Buffer.from(salt, 'base64url'))
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}

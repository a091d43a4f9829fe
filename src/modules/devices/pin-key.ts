import {
  constants,
  createHash,
  createPrivateKey,
  generateKeyPair,
  type KeyObject,
  privateDecrypt,
} from 'node:crypto'
import { promisify } from 'node:util'
import { LRUCache } from 'lru-cache'
import type { AuthContext } from '../../core/identity.js'
import { ownedBy } from '../../db/scope.js'
import type { Executor } from '../../db/types.js'
import { clock } from '../../lib/clock.js'
import { findPinKey, insertPinKey, type PinKeyRow } from './repository.js'
import type { PinKey } from './schemas.js'

const generateRsaKeyPair = promisify(generateKeyPair)

/**
 * The RSA key pair an account and mode's devices encrypt PINs to when they capture a scan offline
 * (decisions.md, "Operator PINs"): a PIN never rests on a tablet in the clear. Made on first need and
 * kept in the database, so every process of the service decrypts with the same key. The private key
 * is stored as PKCS#8 PEM in `pin_keys` and leaves this file only as a decrypted PIN. There is no
 * secret outside the database to encrypt it with (db/settings.ts keeps its secrets in the database
 * too), so it is stored as is: whoever reads the database reads the PIN hashes anyway.
 */
interface LoadedPinKey {
  privateKey: KeyObject
  publicJwk: PinKey
}

// Parsing a PEM costs more than a scan's statements; a key never changes once made.
const loaded = new LRUCache<string, LoadedPinKey>({ max: 1000 })

function load(row: PinKeyRow): LoadedPinKey {
  return { privateKey: createPrivateKey(row.private_key), publicJwk: JSON.parse(row.public_jwk) as PinKey }
}

async function pinKeyOf(db: Executor, auth: AuthContext): Promise<LoadedPinKey> {
  const owner = ownedBy(auth)
  const cacheKey = `${owner.account_id}:${owner.livemode}`
  const hit = loaded.get(cacheKey)
  if (hit) return hit
  let row = await findPinKey(db, owner)
  if (!row) {
    const { publicKey, privateKey } = await generateRsaKeyPair('rsa', { modulusLength: 2048 })
    const { n, e } = publicKey.export({ format: 'jwk' })
    if (n === undefined || e === undefined) throw new Error('an RSA public JWK without n or e')
    const jwk: PinKey = {
      kty: 'RSA',
      n,
      e,
      alg: 'RSA-OAEP-256',
      use: 'enc',
      kid: createHash('sha256').update(n).digest('base64url').slice(0, 16),
    }
    await insertPinKey(db, {
      ...owner,
      private_key: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
      public_jwk: JSON.stringify(jwk),
      created_at: clock.now(),
    })
    // Another request may have stored its pair first: the stored one is the account's.
    row = await findPinKey(db, owner)
    if (!row) throw new Error('the PIN key just stored is missing')
  }
  const key = load(row)
  loaded.set(cacheKey, key)
  return key
}

/** The public half, as `GET /v1/devices/current` shows it. */
export async function pinPublicKey(db: Executor, auth: AuthContext): Promise<PinKey> {
  return (await pinKeyOf(db, auth)).publicJwk
}

const BASE64URL = /^[A-Za-z0-9_-]+$/

/** The PIN a device encrypted to the account's key; undefined when it does not decrypt. */
export async function decryptPin(
  db: Executor,
  auth: AuthContext,
  ciphertext: string,
): Promise<string | undefined> {
  if (!BASE64URL.test(ciphertext)) return undefined
  const { privateKey } = await pinKeyOf(db, auth)
  try {
    const plain = privateDecrypt(
      { key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
      Buffer.from(ciphertext, 'base64url'),
    )
    return plain.toString('utf8')
  } catch {
    return undefined
  }
}

import { hash, verify } from '@node-rs/argon2'
import { errors } from '../../core/errors.js'

/**
 * argon2id with OWASP's first recommended parameters (Password Storage Cheat Sheet: 19 MiB of
 * memory, 2 iterations, 1 lane). `Algorithm` is a `const enum` the package's types declare but its
 * JavaScript does not export, so argon2id is named by its value (2).
 */
const ARGON2ID = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const

export const MIN_PASSWORD_LENGTH = 12
export const MAX_PASSWORD_LENGTH = 256

/** The password's rules (decisions.md, "Sign-in"): 12–256 characters, not the e-mail. */
export function checkPassword(password: string, email: string, param = 'password'): void {
  const length = [...password].length
  if (length < MIN_PASSWORD_LENGTH || length > MAX_PASSWORD_LENGTH)
    throw errors.invalidValue(
      param,
      `A password has ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters.`,
    )
  if (password.trim().toLowerCase() === email.trim().toLowerCase())
    throw errors.invalidValue(param, 'A password cannot be the e-mail address.')
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2ID)
}

/** A hash of a password nobody has, verified when there is no person or no password: the same work either way. */
let dummyHash: Promise<string> | undefined

/**
 * Whether `password` is the one `stored` hashes. With no stored hash (an unknown e-mail, a person
 * without a password) it verifies against a dummy hash all the same, so the answer takes as long.
 */
export async function verifyPassword(stored: string | null | undefined, password: string): Promise<boolean> {
  if (stored === null || stored === undefined) {
    dummyHash ??= hashPassword('not a password anybody has: it only spends the time')
    await verify(await dummyHash, password).catch(() => false)
    return false
  }
  return verify(stored, password).catch(() => false)
}

import { randomFillSync } from 'node:crypto'
import { monotonicFactory } from 'ulid'
import { clock } from './clock.js'

export type IdPrefix =
  | 'acct'
  | 'key'
  | 'op'
  | 'ses'
  | 'dev'
  | 'loc'
  | 'scn'
  | 'we'
  | 'whd'
  | 'wha'
  | 'evt'
  | 'rev'
  | 'pp'
  | 'pr'
  | 'dpc'
  | 'usr'
  | 'mbr'
  | 'sess'
  | 'aud'

const pool = Buffer.alloc(4096)
let poolOffset = pool.length

/**
 * Cryptographic randomness drawn from the system's generator 4 KiB at a time. Asking it for each
 * id (the ulid package's own source does so once per character, 16 per id; request ids took 12
 * bytes a request) is a system call each time: 3 % of a webhook worker's CPU, 3 % of a create's.
 * Each byte is handed out once.
 */
function takeRandom(bytes: number): number {
  if (poolOffset + bytes > pool.length) {
    randomFillSync(pool)
    poolOffset = 0
  }
  const offset = poolOffset
  poolOffset += bytes
  return offset
}

/** A byte as the fraction the ulid package asks for: / 256 maps onto the 32 Base32 characters uniformly (8 values each). */
function pooledRandom(): number {
  return (pool[takeRandom(1)] as number) / 256
}

/** `bytes` random bytes as hexadecimal. */
export function randomHex(bytes: number): string {
  const offset = takeRandom(bytes)
  return pool.toString('hex', offset, offset + bytes)
}

// ULIDs sort by creation time, and the monotonic factory keeps that order within one millisecond in
// this process, which is what keyset pagination on `id` relies on. The time is the process clock's,
// the one `created_at` is stamped with (lib/clock.ts).
const nextUlid = monotonicFactory(pooledRandom)

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${nextUlid(clock.now())}`
}

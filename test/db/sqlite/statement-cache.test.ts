import { describe, expect, it } from 'vitest'
import { SQLite } from '../../../src/db/sqlite/addon.js'
import { StatementCache } from '../../../src/db/sqlite/statement-cache.js'

/** The cache alone, on an in-memory database: it runs once, without the database under test. */
describe('StatementCache', () => {
  it('prepares a statement once and hands out the same one for the same SQL', () => {
    const cache = new StatementCache(new SQLite(':memory:'), 10)
    const first = cache.get('select 1 as one')
    expect(cache.get('select 1 as one')).toBe(first)
    expect(first.get()).toEqual({ one: 1 })
    expect({ hits: cache.hits, misses: cache.misses, size: cache.size }).toEqual({
      hits: 1,
      misses: 1,
      size: 1,
    })
  })

  it('keeps at most `capacity` statements, evicting the least recently used', () => {
    const cache = new StatementCache(new SQLite(':memory:'), 3)
    const text = (n: number) => `select ${n} as n`
    cache.get(text(1))
    cache.get(text(2))
    cache.get(text(3))
    cache.get(text(1)) // 1 is now the most recently used; 2 the least
    cache.get(text(4))
    expect(cache.size).toBe(3)
    expect([1, 2, 3, 4].map((n) => cache.has(text(n)))).toEqual([true, false, true, true])
    for (let n = 0; n < 1000; n++) cache.get(text(n))
    expect(cache.size).toBe(3)
    expect(cache.get(text(999)).get()).toEqual({ n: 999 })
  })

  it('caches nothing and evicts nothing when the SQL does not prepare', () => {
    const cache = new StatementCache(new SQLite(':memory:'), 1)
    cache.get('select 1')
    expect(() => cache.get('selec nothing')).toThrow(/syntax error/)
    expect(cache.size).toBe(1)
    expect(cache.has('select 1')).toBe(true)
  })

  it('refuses a capacity below 1', () => {
    expect(() => new StatementCache(new SQLite(':memory:'), 0)).toThrow(/capacity/)
  })
})

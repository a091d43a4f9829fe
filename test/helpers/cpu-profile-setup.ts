import fs from 'node:fs'
import { Session } from 'node:inspector/promises'
import path from 'node:path'
import { afterAll } from 'vitest'

/**
 * With TEST_CPU_PROFILE_DIR set (vitest.config.ts adds this file then), each test worker profiles its
 * own CPU from its first file on and, after every file, writes what it has so far to
 * `<dir>/worker-<pid>.cpuprofile`: the pool ends its workers with a signal, so `node --cpu-prof`
 * would never write. Read the files with `npx tsx bench/profile-summary.ts <file>`.
 */
const dir = process.env.TEST_CPU_PROFILE_DIR as string
const state = globalThis as { cpuProfileSession?: Promise<Session> }
state.cpuProfileSession ??= (async () => {
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: 1000 })
  await session.post('Profiler.start')
  return session
})()

afterAll(async () => {
  const session = await (state.cpuProfileSession as Promise<Session>)
  // stop gives the profile so far; start again at once to go on sampling the next file.
  const { profile } = await session.post('Profiler.stop')
  await session.post('Profiler.start')
  const file = path.join(dir, `worker-${process.pid}-${Date.now()}.cpuprofile`)
  fs.writeFileSync(file, JSON.stringify(profile))
})

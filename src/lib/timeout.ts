/**
 * `promise`'s value, or `onTimeout()`'s if it has not settled within `ms` (a rejection within the
 * time is passed on). The timer is cleared either way; the promise itself runs on, and a late
 * rejection of it is the caller's to handle.
 */
export async function withinTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(onTimeout()), ms)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

export * from './client.js'
export * from './errors.js'
export type * from './types.js'
export * from './webhooks.js'

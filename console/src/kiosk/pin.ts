import type { CurrentDevice } from './api.js'

/**
 * A PIN sealed for the service alone (decisions.md, "Operator PINs"): a scan captured offline carries
 * this, never the PIN, so a tablet's storage read by anyone holds nothing a PIN can be read from. RSA-OAEP
 * with SHA-256 over the PIN's UTF-8 bytes, to the account's `pin_key` from `GET /v1/devices/current`,
 * as base64url without padding. OAEP is randomised: the same PIN never seals to the same text twice.
 * WebCrypto exists only in a secure context (HTTPS, or localhost): elsewhere this throws.
 */
export async function sealPin(pin: string, pinKey: CurrentDevice['pin_key']): Promise<string> {
  const key = await crypto.subtle.importKey('jwk', pinKey, { name: 'RSA-OAEP', hash: 'SHA-256' }, false, [
    'encrypt',
  ])
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt({ name: 'RSA-OAEP' }, key, new TextEncoder().encode(pin)),
  )
  return btoa(String.fromCharCode(...sealed))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '')
}

/**
 * Random names and name hashes that need to be unique, not secret: a temporary file's suffix, a
 * session id's random part, the file name of a cached server answer. They are made here without
 * `node:crypto`, whose loading alone was about 2.7 ms of every start (and 3–4 ms with its first
 * random bytes) on the way to the banner and to the first request.
 */

/** `count` random bytes from V8's generator, which Node seeds from the system's entropy at start. */
export const quickRandomBytes = (count: number): Uint8Array => {
  const bytes = new Uint8Array(count)
  for (let i = 0; i < count; i++) bytes[i] = Math.floor(Math.random() * 256)
  return bytes
}

/** `count` random bytes as lower-case hex. */
export const quickRandomHex = (count: number): string =>
  Array.from(quickRandomBytes(count), (byte) => byte.toString(16).padStart(2, "0")).join("")

const FNV128_OFFSET = 0x6c62272e07bb014262b821756295c58dn
const FNV128_PRIME = 0x0000000001000000000000000000013bn
const MASK128 = (1n << 128n) - 1n

/**
 * FNV-1a over the UTF-8 bytes of `text`, 128 bits as 32 hex digits: a file name that does not
 * collide by chance. A fast hash keeps no secret (a short one could be found back from it):
 * what is hashed must hold none (model/ServerCache.ts leaves a URL's keys out).
 */
export const nameHash = (text: string): string => {
  let hash = FNV128_OFFSET
  for (const byte of new TextEncoder().encode(text)) hash = ((hash ^ BigInt(byte)) * FNV128_PRIME) & MASK128
  return hash.toString(16).padStart(32, "0")
}

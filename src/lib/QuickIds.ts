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

/** FNV-1a's 128-bit offset basis, 0x6c62272e07bb014262b821756295c58d, in 16-bit limbs, lowest first. */
const FNV128_OFFSET = [0xc58d, 0x6295, 0x2175, 0x62b8, 0x0142, 0x07bb, 0x272e, 0x6c62]

/**
 * FNV-1a over the UTF-8 bytes of `text`, 128 bits as 32 hex digits: a file name that does not
 * collide by chance. A fast hash keeps no secret (a short one could be found back from it):
 * what is hashed must hold none (model/chat/ServerCache.ts leaves a URL's keys out). Computed in
 * 16-bit limbs (BigInt arithmetic took half a millisecond of every start for one URL).
 */
export const nameHash = (text: string): string => {
  const hash = FNV128_OFFSET.slice()
  const product = new Array<number>(8)
  for (const byte of new TextEncoder().encode(text)) {
    hash[0] ^= byte
    // hash × the prime 2^88 + 0x13b, modulo 2^128: 2^88 is five limbs and eight bits up
    for (let i = 0; i < 8; i++) product[i] = hash[i] * 0x13b
    for (let i = 0; i < 3; i++) product[i + 5] += hash[i] * 0x100
    let carry = 0
    for (let i = 0; i < 8; i++) {
      const limb = product[i] + carry
      hash[i] = limb & 0xffff
      carry = Math.floor(limb / 0x10000)
    }
  }
  return hash.map((limb) => limb.toString(16).padStart(4, "0")).reverse().join("")
}

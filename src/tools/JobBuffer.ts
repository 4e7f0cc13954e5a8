/**
 * A background job's output between two reads: at most `max` bytes are kept, the oldest dropped
 * first (and counted, so that the next read can say how much it missed), and the last lines kept
 * apart for `/jobs` and the session file, whatever was read.
 */

/** Bytes of the job's last output kept for `/jobs` and the session file. */
export const TAIL_BYTES = 2000

/** What a read takes: the text since the last read, and the bytes dropped before it. */
export interface Taken {
  readonly text: string
  readonly dropped: number
}

export interface JobBuffer {
  readonly push: (text: string) => void
  /** The text since the last take, emptied. */
  readonly take: () => Taken
  /** The end of everything it printed (read or not), at most TAIL_BYTES characters. */
  readonly tail: () => string
}

const bytes = (text: string): number => Buffer.byteLength(text, "utf8")

/** Drops whole characters from the start of `text` until it is at most `max` bytes. */
const lastBytes = (text: string, max: number): string => {
  const buffer = Buffer.from(text, "utf8")
  if (buffer.length <= max) return text
  let start = buffer.length - max
  // not in the middle of a character: skip continuation bytes
  while (start < buffer.length && (buffer[start] & 0xc0) === 0x80) start++
  return buffer.subarray(start).toString("utf8")
}

export const makeJobBuffer = (max: number): JobBuffer => {
  let pending = ""
  let pendingBytes = 0
  let dropped = 0
  let tail = ""
  return {
    push: (text) => {
      if (text === "") return
      tail = (tail + text).slice(-TAIL_BYTES)
      pending += text
      pendingBytes += bytes(text)
      if (pendingBytes > max) {
        const kept = lastBytes(pending, max)
        const keptBytes = bytes(kept)
        dropped += pendingBytes - keptBytes
        pending = kept
        pendingBytes = keptBytes
      }
    },
    take: () => {
      const taken = { text: pending, dropped }
      pending = ""
      pendingBytes = 0
      dropped = 0
      return taken
    },
    tail: () => tail
  }
}

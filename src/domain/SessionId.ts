import * as Effect from "effect/Effect"

import { quickRandomBytes } from "../lib/QuickIds"
import { BadSessionId } from "./Errors"

const sessionIdPattern = /^\d{8}-\d{6}-[0-9a-f]{8}$/

export const isSessionId = (value: unknown): value is string =>
  typeof value === "string" && value.length === 24 && sessionIdPattern.test(value)

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

/** `YYYYMMDD-HHMMSS-xxxxxxxx`, local time, eight random lowercase hex digits. */
export const makeSessionId = (now: Date, random: Uint8Array): string => {
  const stamp = `${pad(now.getFullYear(), 4)}${pad(now.getMonth() + 1)}${pad(now.getDate())}` +
    `-${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`
  const hex = Array.from(random.subarray(0, 4), (b) => b.toString(16).padStart(2, "0")).join("")
  return `${stamp}-${hex}`
}

export const newSessionId = (now: Date = new Date()): string => makeSessionId(now, quickRandomBytes(4))

const describe = (value: unknown): string => {
  if (typeof value !== "string") return `a ${typeof value}`
  const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value
  return JSON.stringify(shown)
}

/** Every id that comes from outside passes here before it reaches the file system. */
export const validateSessionId = (value: unknown): Effect.Effect<string, BadSessionId> =>
  isSessionId(value)
    ? Effect.succeed(value)
    : Effect.fail(
      new BadSessionId({
        id: typeof value === "string" ? value.slice(0, 200) : String(value),
        message: `not a session id: ${describe(value)} (expected YYYYMMDD-HHMMSS-xxxxxxxx)`
      })
    )

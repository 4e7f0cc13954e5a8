/**
 * Text that came from outside mm (the model, a tool, a session file, a server's error) is
 * printed only through `sanitize` (or `sanitizeProse` for the model's own prose): no escape
 * sequence in it can set the window title, move the cursor, clear the screen or change
 * colours, and nothing in it is hidden. Each control or invisible format character is shown
 * as a visible escape (`\x1b`, `\x9d`, `\u202e`) instead of being deleted: a sequence is shown
 * as its bytes, so it can never swallow the text after it, and a command shown for approval
 * shows every character it contains. See docs/explanation/guarantees.md.
 */

/**
 * What a terminal would act on or not draw: C0 but tab and newline, DEL, C1; the zero-width
 * characters (U+200B–U+200F), the bidi controls (U+061C, U+202A–U+202E, U+2066–U+2069), the
 * word joiner and invisible operators (U+2060–U+2065) and the byte order mark.
 */
const HIDDEN =
  "\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u061c\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2069\\ufeff"

const hiddenTest = new RegExp(`[${HIDDEN}]`)
const hiddenAll = new RegExp(`[${HIDDEN}]`, "g")

/** The same, but the joiners U+200C and U+200D, which emoji and some scripts are written with. */
const PROSE = HIDDEN.replace("\\u200b-\\u200f", "\\u200b\\u200e\\u200f")
const proseTest = new RegExp(`[${PROSE}]`)
const proseAll = new RegExp(`[${PROSE}]`, "g")

/** `\x1b` for a code up to U+00FF, `\u202e` above: plain ASCII, as wide as it looks. */
export const visibleEscape = (char: string): string => {
  const code = char.charCodeAt(0)
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`
}

/**
 * `text` with every control character but `\n` and `\t`, and every invisible format character,
 * shown as a visible escape: what a command, a path, a file or a tool's output contains is all
 * on the screen, in the order it is in. Text without any (the common case) is returned as it is.
 */
export const sanitize = (text: string): string => hiddenTest.test(text) ? text.replace(hiddenAll, visibleEscape) : text

/**
 * As `sanitize`, for the model's answer and reasoning only: the zero-width joiners (U+200C,
 * U+200D) are left in, since emoji of several parts are written with them, and they neither
 * hide nor reorder text. Never for a command, a path or a file shown for a decision.
 */
export const sanitizeProse = (text: string): string =>
  proseTest.test(text) ? text.replace(proseAll, visibleEscape) : text

/** A whole CSI sequence (colours, cursor moves, erasing), 7-bit or C1. */
const CSI = /(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]/g

/**
 * The carriage returns of `text` as a terminal would leave them, in one pass (a run of them
 * is looked at once, however long): a run before a newline is dropped, every other one starts
 * a new line, and the one that ends the text is dropped.
 */
const carriageReturns = (text: string): string => {
  let at = text.indexOf("\r")
  if (at < 0) return text
  const parts: Array<string> = []
  let from = 0
  while (at >= 0) {
    let end = at
    while (text.charCodeAt(end) === 13) end++
    parts.push(text.slice(from, at))
    if (end === text.length) parts.push("\n".repeat(end - at - 1))
    else if (text.charCodeAt(end) !== 10) parts.push("\n".repeat(end - at))
    from = end
    at = text.indexOf("\r", end)
  }
  parts.push(text.slice(from))
  return parts.join("")
}

/**
 * A command's output as the terminal shows it while a tool runs: what a terminal would act on
 * and not show — whole CSI sequences (a build's colours, a progress bar's cursor moves) and the
 * carriage return of a CRLF or a redrawn line — is dropped; every other control, escape or
 * invisible character is made visible as `sanitize` does. Output is information, not a command
 * about to run: `sanitize` alone is for what the user decides on.
 */
export const sanitizeOutput = (text: string): string => sanitize(carriageReturns(text.replace(CSI, "")))

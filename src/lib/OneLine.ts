/** The message of an unknown failure: an Error's, an object's `message`, or the value as text. */
export const messageOf = (cause: unknown): string =>
  cause instanceof Error
    ? cause.message
    : typeof cause === "object" && cause !== null && "message" in cause
    ? String(cause.message)
    : String(cause)

/** The first line of an unknown failure's message: what a person is shown of it. */
export const firstLineOf = (cause: unknown): string => messageOf(cause).split("\n")[0]

/** The first line of `text` that is not blank, trimmed ("" when there is none). */
export const firstLine = (text: string): string => (text.split(/\r?\n/).find((line) => line.trim() !== "") ?? "").trim()

/** `text` on one line, its whitespace collapsed, cut to `max` characters with an ellipsis. */
export const squashed = (text: string, max: number): string => {
  const line = text.replace(/\s+/g, " ").trim()
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

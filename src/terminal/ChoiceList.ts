import type { Key } from "./LineState"

/**
 * A list to choose one line from, drawn below the prompt, with no terminal: Up/Down (and
 * Ctrl-P/Ctrl-N) move, Home/End jump, Enter chooses, Esc or Ctrl-C gives up. The line editor
 * (LineEditor.ts) draws it and feeds it keys; Esc Esc at an empty prompt uses it to pick the
 * question to rewind to.
 */

/** How many items are shown at once; the window follows the highlighted one. */
export const CHOICE_ROWS = 10

type ChoiceStep =
  | { readonly _tag: "Move"; readonly at: number }
  | { readonly _tag: "Done"; readonly at: number | undefined }
  | { readonly _tag: "Ignore" }

export const choiceKey = (at: number, count: number, key: Key): ChoiceStep => {
  if (key.name === "escape" || (key.ctrl === true && (key.name === "c" || key.name === "g"))) {
    return { _tag: "Done", at: undefined }
  }
  if (key.name === "return" || key.name === "enter") return { _tag: "Done", at }
  if (key.name === "up" || (key.ctrl === true && key.name === "p")) return { _tag: "Move", at: Math.max(0, at - 1) }
  if (key.name === "down" || (key.ctrl === true && key.name === "n")) {
    return { _tag: "Move", at: Math.min(count - 1, at + 1) }
  }
  if (key.name === "home" || key.name === "pageup") return { _tag: "Move", at: 0 }
  if (key.name === "end" || key.name === "pagedown") return { _tag: "Move", at: count - 1 }
  return { _tag: "Ignore" }
}

const fit = (line: string, columns: number) => (line.length > columns - 1 ? `${line.slice(0, columns - 2)}…` : line)

/** The title, then the window of items around `at`, the chosen one marked `›` and shown in `highlight`. */
export const choiceLines = (
  title: string,
  items: ReadonlyArray<string>,
  at: number,
  columns: number,
  highlight: (line: string) => string = (line) => line
): ReadonlyArray<string> => {
  const first = Math.max(0, Math.min(at - Math.floor(CHOICE_ROWS / 2), items.length - CHOICE_ROWS))
  const shown = items.slice(first, first + CHOICE_ROWS).map((item, i) =>
    first + i === at ? highlight(fit(`› ${item}`, columns)) : fit(`  ${item}`, columns)
  )
  return [fit(title, columns), ...shown]
}

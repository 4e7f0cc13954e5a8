export interface Style {
  readonly red: (text: string) => string
  readonly dim: (text: string) => string
  readonly yellow: (text: string) => string
  readonly bold: (text: string) => string
  readonly green: (text: string) => string
}

const wrap = (open: number, close: number) => (text: string) => `\u001b[${open}m${text}\u001b[${close}m`

export const colored: Style = {
  red: wrap(31, 39),
  dim: wrap(2, 22),
  yellow: wrap(33, 39),
  bold: wrap(1, 22),
  green: wrap(32, 39)
}

const same = (text: string) => text
export const plain: Style = { red: same, dim: same, yellow: same, bold: same, green: same }

/** NO_COLOR set to a non-empty value turns colour off; set but empty it does not (no-color.org). */
export const noColor = (env: NodeJS.ProcessEnv): boolean => env.NO_COLOR !== undefined && env.NO_COLOR !== ""

/**
 * Whether escape sequences may be written at all: on a terminal that is not `TERM=dumb`. This is
 * the layout switch too (rendered answers, tables, the live status line, the line editor): only a
 * pipe or a dumb terminal turns it off.
 */
export const escapesFor = (stream: { readonly isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean =>
  stream.isTTY === true && env.TERM !== "dumb"

/** The colour switch: off with NO_COLOR (or `--no-color`, which sets it), `TERM=dumb`, or a pipe. */
export const colourFor = (stream: { readonly isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean =>
  escapesFor(stream, env) && !noColor(env)

/** Colours only where `colourFor` says so. */
export const styleFor = (stream: { readonly isTTY?: boolean }, env: NodeJS.ProcessEnv): Style =>
  colourFor(stream, env) ? colored : plain

/** Colour codes and terminal hyperlinks taken out: what a layout without colour draws. */
export const withoutColour = (text: string): string =>
  text.includes("\u001b") ? text.replace(/\u001b\[[0-9;]*m|\u001b\]8;[^\u0007\u001b]*(?:\u0007|\u001b\\)/g, "") : text

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

/** Colours only on a terminal, and never when NO_COLOR is set. */
export const styleFor = (stream: { readonly isTTY?: boolean }, env: NodeJS.ProcessEnv): Style =>
  stream.isTTY === true && !noColor(env) ? colored : plain

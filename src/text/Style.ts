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

/**
 * For a light background: the 256-colour palette's darker shades, each at least 4.5:1 against
 * white (WCAG AA) — xterm's yellow and green are not (about 1.5:1 and 2:1).
 */
const wrap256 = (colour: number, close: number) => (text: string) => `\u001b[38;5;${colour}m${text}\u001b[${close}m`
export const coloredLight: Style = {
  red: wrap256(124, 39),
  dim: wrap256(241, 39),
  yellow: wrap256(130, 39),
  bold: wrap(1, 22),
  green: wrap256(28, 39)
}

/** Which background the colours are for: `theme` from agent.yaml; `auto` reads COLORFGBG (`fg;bg`, bg 7 or 9–15 is light). */
export const themeOf = (theme: "dark" | "light" | "auto", env: NodeJS.ProcessEnv): "dark" | "light" => {
  if (theme !== "auto") return theme
  const bg = Number((env.COLORFGBG ?? "").split(";").at(-1))
  return Number.isInteger(bg) && (bg === 7 || (bg >= 9 && bg <= 15)) ? "light" : "dark"
}

const same = (text: string) => text
export const plain: Style = { red: same, dim: same, yellow: same, bold: same, green: same }

/** NO_COLOR set to a non-empty value turns colour off; set but empty it does not (no-color.org). */
const noColor = (env: NodeJS.ProcessEnv): boolean => env.NO_COLOR !== undefined && env.NO_COLOR !== ""

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

/** Colours only where `colourFor` says so, for the theme's background. */
export const styleFor = (
  stream: { readonly isTTY?: boolean },
  env: NodeJS.ProcessEnv,
  theme: "dark" | "light" = "dark"
): Style => (colourFor(stream, env) ? (theme === "light" ? coloredLight : colored) : plain)

/** Colour codes and terminal hyperlinks taken out: what a layout without colour draws. */
export const withoutColour = (text: string): string =>
  text.includes("\u001b") ? text.replace(/\u001b\[[0-9;]*m|\u001b\]8;[^\u0007\u001b]*(?:\u0007|\u001b\\)/g, "") : text

/**
 * Whether the terminal re-wraps its rows when resized, as most do (tmux, VTE, kitty, iTerm2,
 * Windows Terminal): a row wider than the new width then takes several. xterm and rxvt cut it
 * instead; xterm says so by setting XTERM_VERSION (kept inside tmux, which re-wraps whatever
 * runs it).
 */
export const rewrapsOnResize = (env: NodeJS.ProcessEnv): boolean =>
  env.TMUX !== undefined || (env.XTERM_VERSION === undefined && !/^rxvt/.test(env.TERM ?? ""))

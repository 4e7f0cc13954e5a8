import { graphemesOf } from "./Graphemes"

/** Colour codes and terminal hyperlinks: no room on the screen. */
const INVISIBLE = /\u001b\[[0-9;]*m|\u001b\]8;[^\u0007\u001b]*(?:\u0007|\u001b\\)/g

/**
 * Characters one column wide each, whatever the terminal: printable ASCII, Latin letters with
 * their accents precomposed, general punctuation (dashes, quotes, bullet, ellipsis), arrows and
 * box drawing. Text of these only is measured without splitting it into grapheme clusters.
 */
const NARROW_ONLY = /^[\x20-\x7e\u00a0-\u00ac\u00ae-\u02ff\u2010-\u2027\u2030-\u205e\u2190-\u21ff\u2500-\u259f]*$/

/** A code point drawn two columns wide: East Asian wide and full-width forms, emoji pictographs, flags. */
const isWide = (code: number): boolean =>
  (code >= 0x1100 && code <= 0x115f) ||
  (code >= 0x231a && code <= 0x231b) ||
  (code >= 0x2e80 && code <= 0x303e) ||
  (code >= 0x3041 && code <= 0xa4cf) ||
  (code >= 0xac00 && code <= 0xd7a3) ||
  (code >= 0xf900 && code <= 0xfaff) ||
  (code >= 0xfe30 && code <= 0xfe4f) ||
  (code >= 0xff00 && code <= 0xff60) ||
  (code >= 0xffe0 && code <= 0xffe6) ||
  (code >= 0x1f1e6 && code <= 0x1f1ff) ||
  (code >= 0x1f300 && code <= 0x1f64f) ||
  (code >= 0x1f680 && code <= 0x1f6ff) ||
  (code >= 0x1f900 && code <= 0x1faff) ||
  (code >= 0x20000 && code <= 0x3fffd)

/**
 * A code point that takes no column of its own: controls, combining marks, zero-width and bidi
 * format characters, joiners, variation selectors, the byte order mark. (`sanitize` shows all but
 * the marks, joiners and selectors as visible escapes, which are ASCII.)
 */
const isZero = (code: number): boolean =>
  code < 0x20 ||
  (code >= 0x7f && code < 0xa0) ||
  (code >= 0x300 && code <= 0x36f) ||
  code === 0x61c ||
  (code >= 0x200b && code <= 0x200f) ||
  (code >= 0x202a && code <= 0x202e) ||
  (code >= 0x2060 && code <= 0x2069) ||
  code === 0xfeff ||
  (code >= 0x20d0 && code <= 0x20ff) ||
  (code >= 0xfe00 && code <= 0xfe0f)

/**
 * Columns `text` takes on a terminal, colour codes not counted, by grapheme cluster: an emoji
 * (with its modifiers and joiners) or a CJK character is two, a letter with its combining
 * accents one. Light enough for start-up, unlike a full Unicode width library.
 */
export const displayWidth = (text: string): number => {
  const plain = text.includes("\u001b") ? text.replace(INVISIBLE, "") : text
  if (NARROW_ONLY.test(plain)) return plain.length
  let width = 0
  for (const cluster of graphemesOf(plain)) width += clusterWidth(cluster)
  return width
}

/** Columns one grapheme cluster takes (`displayWidth` of it, without splitting it again). */
export const clusterWidth = (cluster: string): number => {
  const code = cluster.codePointAt(0)!
  if (isZero(code)) return 0
  return isWide(code) || cluster.includes("\ufe0f") ? 2 : 1
}

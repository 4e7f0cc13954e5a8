/** Where characters as people see them start and end in a string: grapheme clusters (Intl.Segmenter, made on first use). */

let graphemes: Intl.Segmenter | undefined
const segments = (text: string) =>
  (graphemes ??= new Intl.Segmenter(undefined, { granularity: "grapheme" })).segment(text)

/** The grapheme clusters of `text`, in order. */
export const graphemesOf = (text: string): Array<string> => Array.from(segments(text), (s) => s.segment)

/** Where the grapheme cluster before `at` starts: an emoji, a CJK character or a combining sequence is one. */
export const previousBoundary = (text: string, at: number): number =>
  at <= 0 ? 0 : segments(text).containing(at - 1)!.index

/** Where the grapheme cluster at `at` ends. */
export const nextBoundary = (text: string, at: number): number => {
  if (at >= text.length) return text.length
  const cluster = segments(text).containing(at)!
  return cluster.index + cluster.segment.length
}

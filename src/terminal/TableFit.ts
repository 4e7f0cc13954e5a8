/**
 * Column widths (padding included) that fit `room` columns. Each column first gets what its
 * longest word needs (or its natural width, if less), so that words are not cut; what is left
 * goes to the columns that want more, evenly, none past its natural width. When even the
 * longest words do not fit, every column shares the room evenly (cells are then cut).
 */
export const fitColumns = (
  natural: ReadonlyArray<number>,
  longestWord: ReadonlyArray<number>,
  room: number
): Array<number> => {
  const total = natural.reduce((a, b) => a + b, 0)
  if (total <= room || room < natural.length * 3) return [...natural]
  const floor = natural.map((w, i) => Math.min(w, longestWord[i]))
  const start = floor.reduce((a, b) => a + b, 0) <= room ? floor : natural.map(() => 3)
  const widths = [...start]
  let left = room - widths.reduce((a, b) => a + b, 0)
  // water-filling: the columns furthest from their natural width get the spare columns first
  const wanting = natural.map((_, i) => i).filter((i) => natural[i] > widths[i]).sort((a, b) =>
    natural[a] - widths[a] - (natural[b] - widths[b])
  )
  for (const [k, i] of wanting.entries()) {
    const share = Math.floor(left / (wanting.length - k))
    const given = Math.min(natural[i] - widths[i], share)
    widths[i] += given
    left -= given
  }
  return widths
}

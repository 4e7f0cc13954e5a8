/**
 * The moment a run's start-up is over: the terminal's first prompt is drawn, print mode's turn
 * is over (answered and saved), the editor's `initialize` is answered. The entry (`CoreLoader.ts`) keeps V8's compiled
 * code then, on the first run of a build: the cache holds what start-up compiles and not what
 * a long session compiled after it (each start reads the whole cache, about 7 ms per MB).
 */
let whenStartedUp: (() => void) | undefined

/** Set once by `Main`, with what the entry passed. */
export const onStartedUp = (then: (() => void) | undefined): void => {
  whenStartedUp = then
}

/** Start-up is over; only the first call counts. */
export const startedUp = (): void => {
  const then = whenStartedUp
  whenStartedUp = undefined
  then?.()
}

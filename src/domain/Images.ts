/** Images a user attaches to a question (`@shot.png` in the terminal, an editor's image block). */

/** An image as attached: its name (a path, or what the editor called it), its type and bytes. */
export interface ImageInput {
  readonly name: string
  readonly mime: string
  readonly bytes: Uint8Array
}

/** An image larger than this is not sent (a data URL a third larger still goes in every request). */
export const IMAGE_MAX_BYTES = 5 * 1024 * 1024

const MIMES: Readonly<Record<string, string>> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp"
}

/** The image type a file name's extension names; undefined for any other file. */
export const imageMimeOf = (name: string): string | undefined => {
  const dot = name.lastIndexOf(".")
  return dot < 0 ? undefined : MIMES[name.slice(dot + 1).toLowerCase()]
}

/** Whether an editor's `mimeType` is one mm sends. */
export const isSentImageType = (mime: string): boolean => Object.values(MIMES).includes(mime.toLowerCase())

/** The line for images a model cannot see. */
export const imagesNotSent = (names: ReadonlyArray<string>, model: string): string =>
  `${names.join(", ")}: not sent — ${model} cannot see images (set model.vision: true in agent.yaml if it can)`

/** What the model reads in place of images it cannot see. */
export const imagesNote = (names: ReadonlyArray<string>): string =>
  `[${names.length === 1 ? "an image" : `${names.length} images`} (${
    names.join(", ")
  }) attached by the user could not be shown to you: this model cannot see images]`

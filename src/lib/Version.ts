declare const MM_VERSION: string | undefined

/** The version of mm, set from package.json when the bundle is built. */
export const VERSION: string = typeof MM_VERSION === "string" ? MM_VERSION : "0.0.0-dev"

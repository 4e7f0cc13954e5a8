/** Builds the search worker (src/tools/SearchWorker.ts) into `outfile`, as one CommonJS file. */
export declare const buildSearchWorker: (outfile: string, options?: { readonly minify?: boolean }) => Promise<unknown>

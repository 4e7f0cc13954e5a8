/** Streamable HTTP on 127.0.0.1; `url` is the MCP endpoint; `floods` the bytes each reply of `flood` managed to write. */
export declare const startHttpServer: () => Promise<
  {
    readonly url: string
    readonly floods: ReadonlyArray<{ readonly bytes: number }>
    readonly close: () => Promise<void>
  }
>
/** The older HTTP+SSE transport on 127.0.0.1; `url` is the SSE endpoint, `requests` the `METHOD /path` of each request. */
export declare const startSseServer: () => Promise<
  { readonly url: string; readonly requests: ReadonlyArray<string>; readonly close: () => Promise<void> }
>

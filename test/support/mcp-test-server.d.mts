/** Streamable HTTP on 127.0.0.1; `url` is the MCP endpoint. */
export declare const startHttpServer: () => Promise<{ readonly url: string; readonly close: () => Promise<void> }>

export declare const LAYERS: ReadonlyArray<ReadonlyArray<string>>
export declare const specifiersOf: (text: string) => Array<string>
export declare const cyclesOf: (graph: ReadonlyMap<string, ReadonlySet<string>>) => Array<Array<string>>
export declare const checkImports: (srcDir: string) => Array<string>

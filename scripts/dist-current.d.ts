export declare const DIST_INPUTS: string[];
export declare const DIST_DIR: string;
export declare const DIST_STAMP: string;
export declare function newestInput(root: string): number;
export declare function distIsCurrent(root: string): boolean;

export declare const DIST_INPUTS: string[];
export declare const DIST_DIR: string;
export declare const DIST_STAMP: string;
export declare function inputFingerprint(root: string): string;
export declare function distIsCurrent(root: string): boolean;

export declare const SIM_BUNDLE: string;
export declare const SIM_SNAPSHOT_BLOB: string;
export declare const SIM_SNAPSHOT_META: string;
export declare function snapshotMeta(): { node: string; arch: string; platform: string };
export declare function simSnapshotArgs(tree: string): string[] | undefined;
export declare function simStartArgs(tree: string): string[];

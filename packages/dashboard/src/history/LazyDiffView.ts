import { preloadable } from "../ui/preloadable";

/** The side-by-side comparison: jsdiff comes with it, not with the list of versions. */
export const LazyDiffView = preloadable(() => import("./DiffView"));

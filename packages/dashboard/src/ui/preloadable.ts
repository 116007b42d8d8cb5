import { type ComponentType, createElement, lazy, useState } from "react";

/**
 * A component whose code is a chunk of its own, which can be fetched before its first render.
 *
 * `React.lazy` alone suspends on its first render even when its chunk is already in: the nearest Suspense
 * boundary shows its fallback, and React then holds the content back until 300 ms after that fallback
 * appeared (its Suspense throttle). One lazy part inside another made a screen wait 300 ms per level.
 * Once `preload()` has settled, this renders the component at once; before, it is `React.lazy`, as usual.
 */
export function preloadable<P extends object>(load: () => Promise<{ default: ComponentType<P> }>) {
  let loaded: ComponentType<P> | null = null;
  let pending: Promise<ComponentType<P>> | null = null;
  const preload = (): Promise<ComponentType<P>> => {
    pending ??= load().then(
      (module) => {
        loaded = module.default;
        return module.default;
      },
      (error: unknown) => {
        // A failed fetch (a new release, a lost connection) may succeed next time.
        pending = null;
        throw error;
      },
    );
    return pending;
  };
  const Lazy = lazy(() => preload().then((component) => ({ default: component })));
  function Preloadable(props: P) {
    // Chosen once per instance: switching from the lazy wrapper to the component would remount it.
    const [Component] = useState<ComponentType<P>>(() => loaded ?? Lazy);
    return createElement(Component, props);
  }
  return Object.assign(Preloadable, { preload });
}

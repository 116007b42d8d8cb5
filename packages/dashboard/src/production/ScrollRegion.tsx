import type { ReactNode } from "react";

/**
 * A box that may scroll sideways at phone width (a wide table, a code line): named and reachable by keyboard,
 * so a keyboard user can scroll it (axe: scrollable-region-focusable). As the preview's snippets do.
 */
export function ScrollRegion({
  label,
  className,
  children,
}: {
  label: string;
  className: string;
  children: ReactNode;
}) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex lint/a11y/useSemanticElements: the scroll box itself must take the focus to be scrolled by keyboard; a named region says what it holds
    <div className={className} tabIndex={0} role="region" aria-label={label}>
      {children}
    </div>
  );
}

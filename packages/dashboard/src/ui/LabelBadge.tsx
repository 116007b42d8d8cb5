import { PRODUCTION } from "@promptstore/core/labels";

/** A label as a badge: production in its own colour, the others alike. */
export function LabelBadge({ name }: { name: string }) {
  return <span className={name === PRODUCTION ? "badge badge-production" : "badge badge-label"}>{name}</span>;
}

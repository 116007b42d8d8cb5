/**
 * The shape every settings list shares (API keys, labels, model connections, webhooks, members,
 * invitations, connected apps): a card with a heading, an intro and its create button; a table that is
 * loading, failed, empty or filled; each row's actions; and the confirmation a removal asks for. A screen
 * says what is in them, not how they are drawn.
 */
import { type ReactNode, useState } from "react";
import { ConfirmDialog } from "./Dialog";
import { ErrorState, errorText, Loading } from "./States";

/** A settings section: `<h2 id>` and its intro, the header's action (a create button) beside them. */
export function SettingsCard({
  id,
  title,
  intro,
  action,
  children,
}: {
  /** The heading's id, which names the section. */
  id: string;
  title: string;
  intro: ReactNode;
  action?: ReactNode;
  children: ReactNode;
}) {
  return (
    <section className="card" aria-labelledby={id}>
      <div className="card-header">
        <div>
          <h2 id={id}>{title}</h2>
          <p>{intro}</p>
        </div>
        {action}
      </div>
      {children}
    </section>
  );
}

export interface Column<T> {
  /** The column's heading, and the cell's label where the table stacks (phone). */
  header: string;
  cell: (row: T) => ReactNode;
}

/** A button in a row's actions cell; `name` is its accessible name where the label alone is ambiguous. */
export interface RowAction {
  label: string;
  name?: string;
  onClick: () => void;
}

/** What the table needs of the list's query. */
interface ListQuery {
  isPending: boolean;
  isError: boolean;
  error: unknown;
  refetch: () => unknown;
}

interface SettingsTableProps<T> {
  query: ListQuery;
  /** The rows, once the query has them. */
  rows: readonly T[];
  rowKey: (row: T) => string;
  /** What the spinner says while the list loads. */
  loading: string;
  /** Shown instead of a table without rows; without it, such a table is shown with its headings. */
  empty?: ReactNode;
  /** The first column is the row's primary cell (no label of its own when stacked). */
  columns: readonly Column<T>[];
  /** Without it, the table has no actions column. */
  actions?: (row: T) => readonly RowAction[];
  /** A class beside `table table-stack`, for a table's own column widths. */
  className?: string;
  /** A visually hidden caption, where no heading names the table. */
  caption?: string;
}

export function SettingsTable<T>({
  query,
  rows,
  rowKey,
  loading,
  empty,
  columns,
  actions,
  className,
  caption,
}: SettingsTableProps<T>) {
  if (query.isPending) return <Loading label={loading} />;
  if (query.isError) return <ErrorState error={query.error} onRetry={() => query.refetch()} />;
  if (rows.length === 0 && empty !== undefined) return <>{empty}</>;
  const [primary, ...rest] = columns;
  return (
    <div className="table-wrap">
      <table className={className ? `table table-stack ${className}` : "table table-stack"}>
        {caption ? <caption className="visually-hidden">{caption}</caption> : null}
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column.header} scope="col">
                {column.header}
              </th>
            ))}
            {actions ? <ActionsHeader /> : null}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)}>
              {primary ? <td className="cell-primary">{primary.cell(row)}</td> : null}
              {rest.map((column) => (
                <td key={column.header} data-label={column.header}>
                  {column.cell(row)}
                </td>
              ))}
              {actions ? <td className="cell-actions">{rowActions(actions(row))}</td> : null}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The heading of a table's actions column: named for screen readers, blank on screen. */
export function ActionsHeader() {
  return (
    <th scope="col" className="cell-actions">
      <span className="visually-hidden">Actions</span>
    </th>
  );
}

function rowActions(actions: readonly RowAction[]): ReactNode {
  const buttons = actions.map((action) => (
    <button
      key={action.label}
      type="button"
      className="button button-small"
      aria-label={action.name}
      onClick={action.onClick}
    >
      {action.label}
    </button>
  ));
  // One button sits in the cell itself; several wrap together on a phone.
  if (buttons.length <= 1) return buttons[0] ?? null;
  return <span className="row-actions">{buttons}</span>;
}

/** What a removal needs of its mutation: the row's id in, success out. */
interface RemoveMutation {
  reset: () => void;
  mutate: (id: string, options: { onSuccess: () => void }) => void;
  isPending: boolean;
  isError: boolean;
  error: unknown;
}

export interface Removal<T> {
  /** The row whose removal is being confirmed, or null. */
  target: T | null;
  /** Asks to confirm the removal of this row (a previous attempt's error is forgotten). */
  ask: (row: T) => void;
  close: () => void;
  confirm: () => void;
  pending: boolean;
  error: string | null;
}

/** A row's removal (or revocation) that waits for a confirmation, then runs `mutation` on its id. */
export function useRemoval<T>(mutation: RemoveMutation, idOf: (row: T) => string): Removal<T> {
  const [target, setTarget] = useState<T | null>(null);
  const close = () => setTarget(null);
  return {
    target,
    ask: (row) => {
      mutation.reset();
      setTarget(row);
    },
    close,
    confirm: () => {
      if (target !== null) mutation.mutate(idOf(target), { onSuccess: close });
    },
    pending: mutation.isPending,
    error: mutation.isError ? errorText(mutation.error) : null,
  };
}

/** The confirmation of a removal, while one is asked for: Cancel first, the danger button second. */
export function RemoveDialog<T>({
  removal,
  title,
  confirmLabel = "Remove",
  children,
}: {
  removal: Removal<T>;
  title: (row: T) => string;
  confirmLabel?: string;
  /** What the removal does, said of this row. */
  children: (row: T) => ReactNode;
}) {
  if (removal.target === null) return null;
  return (
    <ConfirmDialog
      title={title(removal.target)}
      confirmLabel={confirmLabel}
      danger
      pending={removal.pending}
      error={removal.error}
      onClose={removal.close}
      onConfirm={removal.confirm}
    >
      {children(removal.target)}
    </ConfirmDialog>
  );
}

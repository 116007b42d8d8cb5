import type { ReactNode } from "react";
import { isApiError } from "../api/client";
import type { FieldError } from "../api/errors";

export function Loading({ label = "Loading…" }: { label?: string }) {
  return (
    <div className="loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

export function errorText(error: unknown): string {
  if (isApiError(error)) return error.message;
  if (error instanceof Error) return error.message;
  return "Something went wrong.";
}

/** A failed request as a form's error: placed at the field the server named, if it named one. */
export function fieldErrorOf(error: unknown): FieldError {
  return isApiError(error) ? { field: error.field, message: error.detail } : { field: null, message: errorText(error) };
}

interface ErrorStateProps {
  title?: string;
  error: unknown;
  onRetry?: () => void;
}

export function ErrorState({ title = "Could not load this", error, onRetry }: ErrorStateProps) {
  return (
    <div className="state state-error" role="alert">
      <h2>{title}</h2>
      <p>{errorText(error)}</p>
      {onRetry ? (
        <button type="button" className="button" onClick={onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

interface EmptyStateProps {
  title: string;
  children?: ReactNode;
  actions?: ReactNode;
  /** The heading level where it sits in the page's outline. */
  level?: 2 | 3;
}

export function EmptyState({ title, children, actions, level = 2 }: EmptyStateProps) {
  const Heading = level === 2 ? "h2" : "h3";
  return (
    <div className="state">
      <Heading>{title}</Heading>
      {children}
      {actions ? <div className="row">{actions}</div> : null}
    </div>
  );
}

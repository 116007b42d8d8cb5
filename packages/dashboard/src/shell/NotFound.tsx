import { Link } from "react-router";
import { EmptyState } from "../ui/States";

export function NotFound({
  title = "Page not found",
  message = "There is nothing at this address.",
}: {
  title?: string;
  message?: string;
}) {
  return (
    <div className="card">
      <title>{`${title} — Promptstore`}</title>
      <h1 className="visually-hidden">{title}</h1>
      <EmptyState
        title={title}
        actions={
          <Link to="/" className="button">
            Go to your projects
          </Link>
        }
      >
        <p>{message}</p>
      </EmptyState>
    </div>
  );
}

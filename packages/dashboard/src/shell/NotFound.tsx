import { Link } from "react-router";
import { EmptyState } from "../ui/States";
import { useProject } from "./session";

/**
 * Nothing at this address. Inside a project the member belongs to (a prompt that is not there, a mistyped
 * screen) the way on is that project's prompt list; elsewhere, the list of projects.
 */
export function NotFound({
  title = "Page not found",
  message = "There is nothing at this address.",
}: {
  title?: string;
  message?: string;
}) {
  const context = useProject();
  return (
    <div className="card">
      <title>{`${title} — Promptstore`}</title>
      <h1 className="visually-hidden">{title}</h1>
      <EmptyState
        title={title}
        actions={
          context ? (
            <>
              <Link to={`/p/${context.project.id}/prompts`} className="button button-primary">
                Go to the prompts of {context.project.name}
              </Link>
              <Link to="/" className="button">
                All projects
              </Link>
            </>
          ) : (
            <Link to="/" className="button">
              Go to your projects
            </Link>
          )
        }
      >
        <p>{message}</p>
      </EmptyState>
    </div>
  );
}

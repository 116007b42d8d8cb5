import { isRouteErrorResponse, useRouteError } from "react-router";

/** The last resort of the router: a render that threw, or a route chunk that failed to load after a deploy. */
export function RouteError() {
  const error = useRouteError();
  const message = isRouteErrorResponse(error)
    ? `${error.status} ${error.statusText}`
    : error instanceof Error
      ? error.message
      : "Unknown error";
  const stale = /dynamically imported module|Importing a module script failed|error loading/i.test(message);
  return (
    <main className="auth-page">
      <div className="card card-body state state-error" role="alert">
        <h1>Something went wrong</h1>
        <p>{stale ? "A new version of the dashboard is available." : message}</p>
        <button type="button" className="button button-primary" onClick={() => window.location.reload()}>
          Reload the page
        </button>
      </div>
    </main>
  );
}

import { useQuery } from "@tanstack/react-query";
import { Navigate, Outlet, useLocation } from "react-router";
import { sessionQuery } from "../api/queries";
import { ChoosePassword } from "../auth/ChoosePassword";
import { ErrorState, Loading } from "../ui/States";

/** The signed-in part of the app: sends a visitor to Sign in (and back), and a new user to choose a password. */
export function RequireSession() {
  const location = useLocation();
  const session = useQuery(sessionQuery);
  if (session.isPending) {
    return (
      <div className="auth-page" aria-busy="true">
        <Loading label="Loading your session…" />
      </div>
    );
  }
  if (session.isError) {
    return (
      <div className="auth-page">
        <ErrorState title="Could not reach Promptstore" error={session.error} onRetry={() => session.refetch()} />
      </div>
    );
  }
  if (session.data === null) {
    const here = location.pathname + location.search + location.hash;
    const search = here === "/" ? "" : `?${new URLSearchParams({ next: here }).toString()}`;
    return <Navigate to={`/sign-in${search}`} replace />;
  }
  if (session.data.user.must_change_password) return <ChoosePassword />;
  return <Outlet />;
}

import { useNavigate } from "react-router";
import { useSignOut } from "../api/queries";

export function SignOutButton({ className = "button button-ghost" }: { className?: string }) {
  const signOut = useSignOut();
  const navigate = useNavigate();
  return (
    <button
      type="button"
      className={className}
      disabled={signOut.isPending}
      onClick={() => signOut.mutate(undefined, { onSettled: () => navigate("/sign-in", { replace: true }) })}
    >
      Sign out
    </button>
  );
}

import { Brand } from "../shell/Brand";
import { useSession } from "../shell/session";
import { PasswordForm } from "./PasswordForm";
import { SignOutButton } from "./SignOutButton";

/** Before anything else after signing in with a generated one-time password. */
export function ChoosePassword() {
  const session = useSession();
  return (
    <main className="auth-page">
      <title>Choose your password — Promptstore</title>
      <div className="auth-card">
        <Brand />
        <div className="card card-body">
          <h1>Choose your password</h1>
          <p className="lead">
            You signed in as <strong>{session.user.email}</strong> with a one-time password. Choose your own before you
            continue.
          </p>
          <PasswordForm email={session.user.email} submitLabel="Save password" askCurrent={false} />
        </div>
        <div className="row auth-foot">
          <span className="small subtle">Not you?</span>
          <SignOutButton className="button button-ghost button-small" />
        </div>
      </div>
    </main>
  );
}

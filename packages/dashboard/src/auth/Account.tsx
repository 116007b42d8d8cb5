import { ConnectedApps } from "../oauth/ConnectedApps";
import { useSession } from "../shell/session";
import { PasswordForm } from "./PasswordForm";
import { SignOutButton } from "./SignOutButton";

export default function Account() {
  const session = useSession();
  return (
    <div className="stack-lg narrow">
      <title>Account — Promptstore</title>
      <header className="page-header">
        <div>
          <h1>Account</h1>
          <p>
            Signed in as <strong>{session.user.email}</strong>
          </p>
        </div>
      </header>
      <section className="card" aria-labelledby="password-heading">
        <div className="card-header">
          <div>
            <h2 id="password-heading">Change password</h2>
            <p>Changing it signs you out on every other device.</p>
          </div>
        </div>
        <div className="card-body">
          <PasswordForm email={session.user.email} submitLabel="Change password" />
        </div>
      </section>
      <ConnectedApps />
      <section className="card" aria-labelledby="signout-heading">
        <div className="card-header">
          <div>
            <h2 id="signout-heading">Sign out</h2>
            <p>End this session in this browser.</p>
          </div>
          <SignOutButton className="button" />
        </div>
      </section>
    </div>
  );
}

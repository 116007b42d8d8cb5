import { KEY_SCOPES, type KeyScope } from "@promptstore/core/accounts/key-scopes";
import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useSearchParams } from "react-router";
import { type ConsentView, consentQuery, useAnswerConsent } from "../api/oauth-queries";
import { Brand } from "../shell/Brand";
import { useSession } from "../shell/session";
import { FormAlert } from "../ui/Field";
import { ErrorState, errorText, Loading } from "../ui/States";
import "./oauth.css";

const SCOPE_HELP: Record<KeyScope, string> = {
  read: "read the project's prompts",
  write: "also create prompts and save versions",
  publish: "also publish versions (move production) and delete prompts",
};

const rank = (scope: KeyScope) => KEY_SCOPES.indexOf(scope);

/** The consent screen of MCP sign-in: which client, which project, which scope; Allow or Deny. */
export default function Consent() {
  const [params] = useSearchParams();
  const requestId = params.get("request") ?? "";
  const consent = useQuery(consentQuery(requestId));
  let body: React.ReactNode;
  if (consent.isPending) body = <Loading label="Loading the request…" />;
  else if (consent.isError) {
    body = <ErrorState title="This sign-in request cannot be answered" error={consent.error} />;
  } else body = <ConsentForm view={consent.data} />;
  return (
    <main className="auth-page">
      <title>Allow access — Promptstore</title>
      <div className="auth-card consent-card">
        <Brand />
        <div className="card card-body">{body}</div>
      </div>
    </main>
  );
}

function ConsentForm({ view }: { view: ConsentView }) {
  const session = useSession();
  const answer = useAnswerConsent(view.request_id);
  const projects = view.organizations.flatMap((org) => org.projects.map((project) => ({ ...project, org })));
  const [projectId, setProjectId] = useState(projects[0]?.id ?? "");
  const chosen = projects.find((p) => p.id === projectId);
  const highest = chosen?.org.highest_scope ?? "read";
  const [scope, setScope] = useState<KeyScope>("read");
  const allowedScope = rank(scope) <= rank(highest) ? scope : highest;
  const [error, setError] = useState<string | null>(null);

  const send = (decision: "allow" | "deny") => {
    setError(null);
    answer.mutate(decision === "deny" ? { decision } : { decision, project_id: projectId, scope: allowedScope }, {
      onSuccess: ({ redirect_to }) => window.location.assign(redirect_to),
      onError: (e) => setError(errorText(e)),
    });
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    send("allow");
  };

  return (
    <form className="form" onSubmit={submit} noValidate>
      <h1>Allow {view.client.name}?</h1>
      <p className="lead">
        <strong>{view.client.name}</strong> asks to use Promptstore as you ({session.user.email}), through MCP.
      </p>
      <p className="small">
        It will be sent back to <strong className="consent-host">{view.client.redirect_host}</strong>
        {view.client.kind === "document" ? (
          <>
            {" "}
            (client <span className="hash">{view.client.id}</span>)
          </>
        ) : null}
        . Allow only if you started this from that app.
      </p>
      <FormAlert messages={error ? [error] : []} />
      {projects.length === 0 ? (
        <p className="notice notice-warning">You are not a member of any project yet, so there is nothing to allow.</p>
      ) : (
        <>
          <label className="field">
            <span className="field-label">Project</span>
            <select className="select" name="project" value={projectId} onChange={(e) => setProjectId(e.target.value)}>
              {view.organizations.map((org) => (
                <optgroup key={org.id} label={`${org.name} (${org.role})`}>
                  {org.projects.map((project) => (
                    <option key={project.id} value={project.id}>
                      {project.name}
                    </option>
                  ))}
                </optgroup>
              ))}
            </select>
          </label>
          <fieldset className="field consent-scopes">
            <legend className="field-label">What it may do there</legend>
            {KEY_SCOPES.map((s) => {
              const disabled = rank(s) > rank(highest);
              return (
                <label key={s} className="consent-scope" data-disabled={disabled || undefined}>
                  <input
                    type="radio"
                    name="scope"
                    value={s}
                    checked={allowedScope === s}
                    disabled={disabled}
                    onChange={() => setScope(s)}
                  />
                  <span>
                    <strong>{s}</strong>: {SCOPE_HELP[s]}
                    {disabled ? ` (your role, ${chosen?.org.role}, does not allow it)` : ""}
                  </span>
                </label>
              );
            })}
          </fieldset>
          <p className="small subtle">
            {view.requested_scope ? `The app asked for ${view.requested_scope}. ` : ""}It can never approve a release.
            You can revoke it at any time under Account → Connected apps.
          </p>
        </>
      )}
      <div className="consent-actions">
        <button
          type="submit"
          className="button button-primary"
          disabled={answer.isPending || projects.length === 0}
          aria-busy={answer.isPending || undefined}
        >
          Allow
        </button>
        <button type="button" className="button" disabled={answer.isPending} onClick={() => send("deny")}>
          Deny
        </button>
      </div>
    </form>
  );
}

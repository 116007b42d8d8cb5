import type { DashboardPromptList } from "@promptstore/core/dashboard";
import { can } from "@promptstore/core/permissions";
import { useQuery } from "@tanstack/react-query";
import { type ReactNode, useDeferredValue, useId, useMemo } from "react";
import { Link, useLocation, useNavigate, useParams, useSearchParams } from "react-router";
import { promptListQuery } from "../api/queries";
import { useProject } from "../shell/session";
import { formatCount, plural, rangeLabel, shortHash } from "../ui/format";
import { labelsInUse } from "../ui/labels";
import { EmptyState, ErrorState, Loading } from "../ui/States";
import { TimeAgo } from "../ui/TimeAgo";
import "./prompts.css";

export const PAGE_SIZE = 50;
const VISIBLE_VARIABLES = 6;

type Item = DashboardPromptList["prompts"][number];

/** Name and id, case-insensitively: what a person remembers of a prompt. */
export function matches(prompt: { id: string; name: string }, query: string): boolean {
  const q = query.trim().toLowerCase();
  return q === "" || prompt.name.toLowerCase().includes(q) || prompt.id.toLowerCase().includes(q);
}

export function PromptList() {
  const { projectId = "" } = useParams();
  const context = useProject();
  const navigate = useNavigate();
  const location = useLocation();
  const [params, setParams] = useSearchParams();
  const list = useQuery(promptListQuery(projectId));
  // What the screen that sent us here did (a deletion).
  const notice = (location.state as { notice?: unknown } | null)?.notice;
  const searchId = useId();
  const query = params.get("q") ?? "";
  const deferredQuery = useDeferredValue(query);
  const role = list.data?.role ?? context?.role ?? "viewer";
  const canWrite = can(role, "write");

  const filtered = useMemo(
    () => (list.data ? list.data.prompts.filter((p) => matches(p, deferredQuery)) : []),
    [list.data, deferredQuery],
  );
  // A column per label in use in the project (production has its own).
  const labelColumns = useMemo(() => labelsInUse(list.data?.prompts ?? []), [list.data]);
  const pages = Math.max(1, Math.ceil(filtered.length / PAGE_SIZE));
  const page = Math.min(Math.max(1, Number(params.get("page")) || 1), pages);
  const start = (page - 1) * PAGE_SIZE;
  const visible = filtered.slice(start, start + PAGE_SIZE);

  const update = (changes: Record<string, string | null>) => {
    const next = new URLSearchParams(params);
    for (const [key, value] of Object.entries(changes)) {
      if (value === null || value === "") next.delete(key);
      else next.set(key, value);
    }
    setParams(next, { replace: true });
  };

  const newPrompt = canWrite ? (
    <button type="button" className="button button-primary" onClick={() => navigate("new")}>
      New prompt
    </button>
  ) : null;

  const total = list.data?.prompts.length ?? 0;
  let body: ReactNode;
  if (list.isPending) {
    body = <Loading label="Loading prompts…" />;
  } else if (list.isError) {
    body = <ErrorState title="Could not load the prompts" error={list.error} onRetry={() => list.refetch()} />;
  } else if (total === 0) {
    body = (
      <EmptyState title="No prompts yet" actions={newPrompt}>
        <p>
          A prompt is a named list of sections that your applications read by its id. Each save makes an immutable
          version; you choose which one is in production.
        </p>
        <p className="small">
          {canWrite ? "Create the first one here, or" : "Prompts can be created"} over the REST API with a project API
          key: <code>POST /api/v2/prompts</code>.
        </p>
      </EmptyState>
    );
  } else if (filtered.length === 0) {
    body = (
      <EmptyState
        title="No matching prompts"
        actions={
          <button type="button" className="button" onClick={() => update({ q: null, page: null })}>
            Clear search
          </button>
        }
      >
        <p>No prompt has “{query.trim()}” in its name or id.</p>
      </EmptyState>
    );
  } else {
    body = (
      <>
        <div className="table-wrap">
          <table className="table table-stack prompt-table">
            <caption className="visually-hidden">Prompts</caption>
            <thead>
              <tr>
                <th scope="col">Prompt</th>
                <th scope="col">Production</th>
                <th scope="col">Latest</th>
                {labelColumns.map((name) => (
                  <th key={name} scope="col" className="label-column">
                    {name}
                  </th>
                ))}
                <th scope="col">Variables</th>
              </tr>
            </thead>
            <tbody>
              {visible.map((prompt) => (
                <PromptRow key={prompt.id} prompt={prompt} labelColumns={labelColumns} />
              ))}
            </tbody>
          </table>
        </div>
        <nav className="pager" aria-label="Pages">
          <span aria-live="polite">{rangeLabel(start, start + visible.length, filtered.length)}</span>
          {pages > 1 ? (
            <span className="row">
              <button
                type="button"
                className="button button-small"
                disabled={page <= 1}
                onClick={() => update({ page: page - 1 === 1 ? null : String(page - 1) })}
              >
                Previous
              </button>
              <span className="small">
                Page {page} of {pages}
              </span>
              <button
                type="button"
                className="button button-small"
                disabled={page >= pages}
                onClick={() => update({ page: String(page + 1) })}
              >
                Next
              </button>
            </span>
          ) : null}
        </nav>
      </>
    );
  }

  return (
    <div className="stack">
      <title>{`Prompts · ${list.data?.project.name ?? context?.project.name ?? "Project"} — Promptstore`}</title>
      <header className="page-header">
        <div>
          <h1>Prompts</h1>
          <p>
            {list.data?.project.name ?? context?.project.name}
            {list.data ? ` · ${plural(total, "prompt")}` : ""}
          </p>
        </div>
        {total > 0 ? newPrompt : null}
      </header>
      {typeof notice === "string" ? (
        <p className="notice notice-success" role="status">
          {notice}
        </p>
      ) : null}
      <section className="card" aria-busy={list.isPending} aria-label="Prompt list">
        {total > 0 ? (
          <div className="list-toolbar">
            <label htmlFor={searchId} className="visually-hidden">
              Search prompts
            </label>
            <input
              id={searchId}
              className="input search"
              type="search"
              placeholder="Search by name or id"
              value={query}
              onChange={(e) => update({ q: e.target.value, page: null })}
            />
            {query.trim() !== "" ? (
              <span className="small muted" role="status">
                {formatCount(filtered.length)} of {formatCount(total)}
              </span>
            ) : null}
          </div>
        ) : null}
        {body}
      </section>
    </div>
  );
}

function PromptRow({ prompt, labelColumns }: { prompt: Item; labelColumns: readonly string[] }) {
  const extra = prompt.variables.length - VISIBLE_VARIABLES;
  return (
    <tr>
      <td className="cell-primary">
        <Link to={encodeURIComponent(prompt.id)} className="prompt-name">
          {prompt.name}
        </Link>
        <div className="prompt-id mono">{prompt.id}</div>
        {prompt.description ? <p className="prompt-description">{prompt.description}</p> : null}
      </td>
      <td data-label="Production">
        {prompt.production_version ? (
          <span className="pointer">
            <span className="hash">{shortHash(prompt.production_version)}</span>
            {prompt.production_saved_at ? (
              <span className="subtle small">
                <TimeAgo iso={prompt.production_saved_at} />
              </span>
            ) : null}
            {prompt.production_version === prompt.latest_version ? (
              <span className="subtle small">= latest</span>
            ) : null}
          </span>
        ) : (
          <span className="badge badge-outline">not published</span>
        )}
      </td>
      <td data-label="Latest">
        <span className="pointer">
          <span className="hash">{shortHash(prompt.latest_version)}</span>
          <span className="subtle small">
            <TimeAgo iso={prompt.latest_saved_at} />
          </span>
        </span>
      </td>
      {labelColumns.map((name) => {
        const hash = prompt.labels?.[name];
        return (
          <td key={name} data-label={name}>
            {hash ? (
              <span className="pointer">
                <span className="hash">{shortHash(hash)}</span>
                {hash === prompt.production_version ? <span className="subtle small">= production</span> : null}
              </span>
            ) : (
              <span className="subtle small">not set</span>
            )}
          </td>
        );
      })}
      <td data-label="Variables">
        {prompt.variables.length === 0 ? (
          <span className="subtle small">none</span>
        ) : (
          <ul className="chips" aria-label="Variables">
            {prompt.variables.slice(0, VISIBLE_VARIABLES).map((v) => (
              <li key={v} className="chip">
                {v}
              </li>
            ))}
            {extra > 0 ? (
              <li className="chip chip-more" title={prompt.variables.slice(VISIBLE_VARIABLES).join(", ")}>
                +{extra} more
              </li>
            ) : null}
          </ul>
        )}
      </td>
    </tr>
  );
}

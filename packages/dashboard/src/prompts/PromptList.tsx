import { can } from "@promptstore/core/accounts/permissions";
import { type DashboardPromptPage, PROMPT_SEARCH_MAX } from "@promptstore/core/dashboard";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { type ReactNode, useEffect, useId, useMemo, useState } from "react";
import { Link, useLocation, useNavigate, useParams, useSearchParams } from "react-router";
import { promptPageQuery } from "../api/queries";
import { useProject } from "../shell/session";
import { formatCount, plural, rangeLabel, shortHash } from "../ui/format";
import { labelColumns as columnsOf } from "../ui/labels";
import { EmptyState, ErrorState, Loading } from "../ui/States";
import { TimeAgo } from "../ui/TimeAgo";
import { PAGE_SIZE, pageCount, pageParam, pageValue, searchText } from "./paging";
import { useSentSearch } from "./useSentSearch";
import "./prompts.css";

const VISIBLE_VARIABLES = 6;

type Item = DashboardPromptPage["prompts"][number];

/** Marks an address the list wrote itself (the search typed, a page turned): its search box shows it already. */
const FROM_LIST = "fromPromptList";
type ListState = { [FROM_LIST]?: true };

/**
 * The project's prompts, a page at a time, searched by name or id. The server searches, counts and pages
 * (a project may hold 100 000 prompts); the screen asks for one page of one search, keeps showing the last
 * answer while the next is on its way, and sends the search text once typing pauses.
 */
export function PromptList() {
  const { projectId = "" } = useParams();
  const context = useProject();
  const navigate = useNavigate();
  const location = useLocation();
  const [params, setParams] = useSearchParams();
  // What the screen that sent us here did (a deletion).
  const notice = (location.state as { notice?: unknown } | null)?.notice;
  const searchId = useId();
  const query = params.get("q") ?? "";
  // The search box's text is the screen's own, written to the address as it changes. Not read back from the
  // address: the router applies a navigation in a transition, and a controlled input given the address's
  // older text between two quick keystrokes loses what was typed. An address the list did not write (a link,
  // Back) replaces the text.
  const [text, setText] = useState(query);
  const [seenLocation, setSeenLocation] = useState(location.key);
  if (location.key !== seenLocation) {
    setSeenLocation(location.key);
    if (!(location.state as ListState | null)?.[FROM_LIST] && query !== text) setText(query);
  }
  const requestedPage = pageParam(params.get("page"));
  const sent = useSentSearch(searchText(text), requestedPage);
  const list = useQuery({
    ...promptPageQuery(projectId, sent.q, sent.page, PAGE_SIZE),
    // The previous page or search stays on screen (marked busy) until the next one answers: no flash of
    // "Loading" at each keystroke or page.
    placeholderData: keepPreviousData,
  });
  const data = list.data;
  const role = data?.role ?? context?.role ?? "viewer";
  const canWrite = can(role, "write");

  // A column per label in use in the project (production has its own).
  const labelColumns = useMemo(() => columnsOf(data?.labels ?? []), [data?.labels]);
  const total = data?.total ?? 0;
  const matching = data?.matching ?? 0;
  const pages = pageCount(matching);
  const shownPage = data?.page ?? 1;
  const start = (shownPage - 1) * PAGE_SIZE;
  const visible = data?.prompts ?? [];
  // Fewer prompts than the address's page needs (some were deleted, or an old link): the last page instead.
  const pastTheEnd = data !== undefined && !list.isPlaceholderData && visible.length === 0 && shownPage > pages;

  const update = (changes: Record<string, string | null>) => {
    const next = new URLSearchParams(params);
    for (const [key, value] of Object.entries(changes)) {
      if (value === null || value === "") next.delete(key);
      else next.set(key, value);
    }
    setParams(next, { replace: true, state: { [FROM_LIST]: true } satisfies ListState });
  };
  useEffect(() => {
    if (!pastTheEnd) return;
    setParams(
      (current) => {
        const next = new URLSearchParams(current);
        const last = pageValue(pages);
        if (last === null) next.delete("page");
        else next.set("page", last);
        return next;
      },
      { replace: true, state: { [FROM_LIST]: true } satisfies ListState },
    );
  }, [pastTheEnd, pages, setParams]);

  const newPrompt = canWrite ? (
    <button type="button" className="button button-primary" onClick={() => navigate("new")}>
      New prompt
    </button>
  ) : null;

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
  } else if (matching === 0) {
    body = (
      <EmptyState
        title="No matching prompts"
        actions={
          <button
            type="button"
            className="button"
            onClick={() => {
              setText("");
              update({ q: null, page: null });
            }}
          >
            Clear search
          </button>
        }
      >
        <p>No prompt has “{data?.q}” in its name or id.</p>
      </EmptyState>
    );
  } else if (visible.length === 0) {
    // Past the last page (prompts deleted since, an old link): on the way to the last one.
    body = <Loading label="Loading prompts…" />;
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
          <span aria-live="polite">{rangeLabel(start, start + visible.length, matching)}</span>
          {pages > 1 ? (
            <span className="row">
              <button
                type="button"
                className="button button-small"
                disabled={requestedPage <= 1}
                onClick={() => update({ page: pageValue(requestedPage - 1) })}
              >
                Previous
              </button>
              <span className="small">
                Page {formatCount(shownPage)} of {formatCount(pages)}
              </span>
              <button
                type="button"
                className="button button-small"
                disabled={requestedPage >= pages}
                onClick={() => update({ page: pageValue(Math.min(requestedPage, pages) + 1) })}
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
      <title>{`Prompts · ${data?.project.name ?? context?.project.name ?? "Project"} — Promptstore`}</title>
      <header className="page-header">
        <div>
          <h1>Prompts</h1>
          <p>
            {data?.project.name ?? context?.project.name}
            {data ? ` · ${plural(total, "prompt")}` : ""}
          </p>
        </div>
        {total > 0 ? newPrompt : null}
      </header>
      {typeof notice === "string" ? (
        <p className="notice notice-success" role="status">
          {notice}
        </p>
      ) : null}
      <section className="card" aria-busy={list.isPending || list.isPlaceholderData} aria-label="Prompt list">
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
              value={text}
              maxLength={PROMPT_SEARCH_MAX}
              onChange={(e) => {
                setText(e.target.value);
                update({ q: e.target.value, page: null });
              }}
            />
            {data && data.q !== "" ? (
              <span className="small muted" role="status">
                {formatCount(matching)} of {formatCount(total)}
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

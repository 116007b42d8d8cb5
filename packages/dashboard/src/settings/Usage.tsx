import { useQuery } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { usageQuery } from "../api/queries";
import { formatCount, formatSeconds } from "../ui/format";
import { ErrorState, Loading } from "../ui/States";

const limitText = (limit: number | null, unit: string) =>
  limit === null ? "no limit" : `${formatCount(limit)} ${unit}`;

export function Usage({ orgId, currentProjectId }: { orgId: string; currentProjectId: string }) {
  const usage = useQuery(usageQuery(orgId));

  let body: ReactNode;
  if (usage.isPending) body = <Loading label="Loading the usage…" />;
  else if (usage.isError) body = <ErrorState error={usage.error} onRetry={() => usage.refetch()} />;
  else {
    const { org, limits, rate, projects } = usage.data;
    const perProject = limits.prompts_per_project;
    body = (
      <div className="card-body stack-lg">
        <dl className="facts">
          <dt>Plan</dt>
          <dd>
            <span className="badge badge-latest plan-badge">{org.plan}</span>
          </dd>
          <dt>Prompts per project</dt>
          <dd>{limitText(perProject, "prompts")}</dd>
          <dt>API requests</dt>
          <dd>{limitText(limits.requests_per_minute, "per minute")}</dd>
        </dl>

        <div className="stack usage-rate">
          <h3 id="rate-heading">This minute</h3>
          {rate ? (
            <>
              <meter
                className="meter"
                aria-labelledby="rate-heading"
                aria-describedby="rate-text"
                min={0}
                max={rate.limit}
                low={rate.limit * 0.7}
                high={rate.limit * 0.9}
                optimum={0}
                value={rate.used}
              />
              <p id="rate-text" className="muted">
                {formatCount(rate.used)} of {formatCount(rate.limit)} requests this minute, resets in{" "}
                {formatSeconds(rate.reset_seconds)}.
              </p>
            </>
          ) : (
            <p className="muted">No limit on this plan: requests are not counted against a rate.</p>
          )}
        </div>

        <div className="stack">
          <h3>Prompts by project</h3>
          <ul className="usage-projects">
            {projects.map((project) => {
              const labelId = `usage-${project.id}`;
              return (
                <li key={project.id}>
                  <span id={labelId} className="usage-project-name">
                    {project.name}
                    {project.id === currentProjectId ? <span className="subtle"> (this project)</span> : null}
                  </span>
                  {perProject !== null ? (
                    <meter
                      className="meter"
                      aria-labelledby={labelId}
                      min={0}
                      max={perProject}
                      high={perProject * 0.9}
                      optimum={0}
                      value={project.prompt_count}
                    />
                  ) : null}
                  <span className="usage-count">
                    {formatCount(project.prompt_count)}
                    {perProject !== null ? ` of ${formatCount(perProject)}` : " (no limit)"}
                  </span>
                </li>
              );
            })}
          </ul>
        </div>
      </div>
    );
  }

  return (
    <section className="card" aria-labelledby="usage-heading" aria-busy={usage.isPending}>
      <div className="card-header">
        <div>
          <h2 id="usage-heading">Plan and usage</h2>
          <p>Limits apply to the whole organization.</p>
        </div>
      </div>
      {body}
    </section>
  );
}

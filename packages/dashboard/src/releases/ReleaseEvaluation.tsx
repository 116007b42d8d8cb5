import { useQuery } from "@tanstack/react-query";
import { Link } from "react-router";
import { evaluationsQuery } from "../api/evaluation-queries";
import type { Release } from "../api/release-queries";
import { percent, releaseEvaluation, versionTitle } from "../evaluations/results";
import { plural, shortHash } from "../ui/format";
import { TimeAgo } from "../ui/TimeAgo";

/**
 * The candidate's last evaluation against what the label serves now (issue 38): the newest evaluation of the
 * prompt that ran both, its pass rates and regressions, and a link to it. Information for the reviewer; the
 * next issue makes it a gate. Says so when there is none.
 */
export function ReleaseEvaluation({ projectId, release }: { projectId: string; release: Release }) {
  const list = useQuery(evaluationsQuery(projectId, release.prompt_id, 100));
  if (release.from_version === null || release.from_version === release.version) return null;
  // Quietly absent while loading or when it cannot be read: the request itself is on the screen.
  if (!list.data) return null;
  const found = releaseEvaluation(list.data.evaluations, release.version, release.from_version);
  const evaluateLink = `/p/${projectId}/prompts/${encodeURIComponent(release.prompt_id)}/evaluate`;
  if (!found) {
    return (
      <div className="card-body release-evaluation">
        <h3>Evaluation</h3>
        <p className="small muted">
          No evaluation has run {shortHash(release.version)} against {shortHash(release.from_version)}, what{" "}
          {release.label} serves now.{" "}
          <Link to={evaluateLink} className="inline-link">
            Evaluate them
          </Link>
          .
        </p>
      </div>
    );
  }
  const { evaluation, candidate, current, regressions, improvements } = found;
  return (
    <div className="card-body release-evaluation">
      <h3>
        Evaluation{" "}
        <span className="subtle small">
          ({evaluation.status}, <TimeAgo iso={evaluation.created_at} />, {plural(evaluation.dataset.cases, "case")})
        </span>
      </h3>
      <dl className="facts release-facts">
        <dt>Candidate {shortHash(candidate.version)}</dt>
        <dd>
          <strong>{percent(candidate.pass_rate)}</strong> pass ({candidate.passed} passed, {candidate.failed} failed,{" "}
          {candidate.errored} errored)
        </dd>
        <dt>
          {release.label} now {shortHash(current.version)}
        </dt>
        <dd>
          <strong>{percent(current.pass_rate)}</strong> pass ({current.passed} passed, {current.failed} failed,{" "}
          {current.errored} errored)
        </dd>
        {regressions !== null ? (
          <>
            <dt>Against {release.label} now</dt>
            <dd>
              <span className={regressions > 0 ? "eval-regressions" : ""}>{plural(regressions, "regression")}</span>,{" "}
              {plural(improvements ?? 0, "improvement")}
            </dd>
          </>
        ) : null}
      </dl>
      <p className="small">
        <Link to={`${evaluateLink}?evaluation=${evaluation.id}`}>
          Open the evaluation ({evaluation.versions.map((v) => versionTitle(v)).join(" · ")})
        </Link>
      </p>
    </div>
  );
}

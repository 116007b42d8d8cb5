import { useQuery } from "@tanstack/react-query";
import { type Release, releaseQuery } from "../api/release-queries";
import type { ExampleResult } from "../playground/run-types";
import { shortHash } from "../ui/format";
import { ImportedMark } from "../ui/ImportedMark";
import { TimeAgo } from "../ui/TimeAgo";

export interface ReleaseExample {
  example_id: string;
  name: string;
  candidate: ExampleResult | null;
  production: ExampleResult | null;
}

/**
 * How the candidate answered the prompt's saved examples next to how what the label serves now answered
 * them (docs/playground.md, "Where results show"): the newest kept result of each, labelled with when it ran.
 */
export function ReleaseExamples({
  projectId,
  releaseId,
  label,
}: {
  projectId: string;
  releaseId: string;
  label: string;
}) {
  const detail = useQuery(releaseQuery<Release & { examples?: ReleaseExample[] }>(projectId, releaseId));
  // Quietly absent while loading or when it cannot be read: the request itself is already on the screen.
  const examples = detail.data?.examples ?? [];
  if (examples.length === 0) return null;
  const tried = examples.filter((e) => e.candidate !== null).length;
  return (
    <div className="card-body release-examples">
      <h3>
        Saved examples{" "}
        <span className="subtle small">
          (candidate tried on {tried} of {examples.length})
        </span>
      </h3>
      <div className="table-wrap">
        <table className="table table-stack">
          <thead>
            <tr>
              <th scope="col">Example</th>
              <th scope="col">Candidate</th>
              <th scope="col">{label} now</th>
            </tr>
          </thead>
          <tbody>
            {examples.map((e) => (
              <tr key={e.example_id}>
                <td className="cell-primary">{e.name}</td>
                <td data-label="Candidate">
                  <Answer result={e.candidate} />
                </td>
                <td data-label={`${label} now`}>
                  <Answer result={e.production} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

function Answer({ result }: { result: ExampleResult | null }) {
  if (!result) return <span className="subtle">not run</span>;
  const text =
    result.answer.content ?? `Calls ${(result.answer.tool_calls ?? []).map((c) => c.function.name).join(", ")}`;
  return (
    <span className="release-answer">
      <span className="release-answer-text">{text}</span>
      <span className="subtle small">
        {shortHash(result.version)} · ran <TimeAgo iso={result.ran_at} />
      </span>
      {result.imported ? <ImportedMark /> : null}
    </span>
  );
}

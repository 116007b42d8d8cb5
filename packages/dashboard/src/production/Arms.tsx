import { useId } from "react";
import type { OutcomesView } from "../api/outcome-queries";
import { shortHash } from "../ui/format";
import { armPairs } from "./arms";
import { METRICS, percent, points, show } from "./metrics";
import { ScrollRegion } from "./ScrollRegion";

/** During a rollout: per label, the current and candidate arms side by side, and the ok rate's difference. */
export function Arms({ view }: { view: OutcomesView }) {
  const id = useId();
  const pairs = armPairs(view);
  if (pairs.length === 0) return null;
  return (
    <section className="card" aria-labelledby={id}>
      <header className="card-header">
        <h3 id={id}>Rollout</h3>
        <p>The two arms of each label in a rollout, over the range.</p>
      </header>
      {pairs.map((pair) => (
        <div key={pair.label} className="production-arms">
          <ScrollRegion className="table-wrap" label={`Arms of ${pair.label}`}>
            <table className="table">
              <caption className="production-caption">
                <span className="badge">{pair.label}</span> current {shortHash(pair.current.version)} · candidate{" "}
                {shortHash(pair.candidate.version)}
              </caption>
              <thead>
                <tr>
                  <th scope="col">Arm</th>
                  {METRICS.map((m) => (
                    <th key={m.name} scope="col" className="num">
                      {m.title}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {(["current", "candidate"] as const).map((arm) => (
                  <tr key={arm}>
                    <th scope="row">
                      {arm === "current" ? "Current" : "Candidate"}{" "}
                      <span className="hash">{shortHash(pair[arm].version)}</span>
                    </th>
                    {METRICS.map((m) => (
                      <td key={m.name} className="num">
                        {show(m, pair[arm].totals)}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
          <p className="production-difference">
            {pair.difference === null || pair.interval === null ? (
              "Ok rate, candidate − current: not known until both arms have outcomes."
            ) : (
              <>
                Ok rate, candidate − current: <strong>{points(pair.difference)}</strong>, always-valid{" "}
                {percent(pair.level, 0)} interval <strong>{points(pair.interval[0])}</strong> to{" "}
                <strong>{points(pair.interval[1])}</strong>
              </>
            )}
          </p>
        </div>
      ))}
    </section>
  );
}

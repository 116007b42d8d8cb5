import type { UseQueryResult } from "@tanstack/react-query";
import { useId } from "react";
import type { FleetView } from "../api/outcome-queries";
import { plural, shortHash } from "../ui/format";
import { ErrorState, Loading } from "../ui/States";
import { TimeAgo } from "../ui/TimeAgo";

type Serving = FleetView["serving"][number];

/** The fleet: per label, the hashes the running clients hold now and by how many instances. */
export function Fleet({ query }: { query: UseQueryResult<FleetView> }) {
  const id = useId();
  let body: React.ReactNode;
  if (query.isPending) body = <Loading label="Loading the fleet…" />;
  else if (query.isError)
    body = <ErrorState title="Could not load the fleet" error={query.error} onRetry={() => void query.refetch()} />;
  else if (query.data.serving.length === 0)
    body = (
      <p className="muted">
        No instance reported in the last {Math.round(query.data.window_seconds / 60)} minutes. The clients report what
        they serve with their outcomes.
      </p>
    );
  else {
    const byLabel = new Map<string | null, Serving[]>();
    for (const s of query.data.serving) byLabel.set(s.label, [...(byLabel.get(s.label) ?? []), s]);
    body = (
      <ul className="production-fleet">
        {[...byLabel].map(([label, rows]) => (
          <li key={label ?? ""}>
            <span className="badge">{label ?? "by version"}</span>{" "}
            {rows.map((row, i) => (
              <span key={row.version}>
                {i > 0 ? ", " : ""}
                {plural(row.instances, "instance")}{" "}
                {i === 0 ? (row.instances === 1 ? "serves" : "serve") : "still serve"}
                {i > 0 && row.instances === 1 ? "s" : ""} <span className="hash">{shortHash(row.version)}</span>
                {i > 0 ? (
                  <>
                    {" "}
                    (last seen <TimeAgo iso={row.last_seen} />)
                  </>
                ) : null}
              </span>
            ))}
          </li>
        ))}
      </ul>
    );
  }
  return (
    <section className="card" aria-labelledby={id}>
      <header className="card-header">
        <h3 id={id}>Fleet</h3>
        <p>
          {query.data
            ? `${plural(query.data.instances, "instance")} heard from in the last ${Math.round(query.data.window_seconds / 60)} minutes`
            : "What the running clients serve now"}
        </p>
      </header>
      <div className="card-body">{body}</div>
    </section>
  );
}

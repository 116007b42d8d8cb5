import { can } from "@promptstore/core/accounts/permissions";
import type { IncludeState, IncludesUpdate } from "@promptstore/core/views";
import { useQuery } from "@tanstack/react-query";
import { useId, useState } from "react";
import { Link } from "react-router";
import { useUpdateIncludes } from "../api/include-queries";
import { labelSettingsQuery } from "../api/release-queries";
import { useProject } from "../shell/session";
import { shortHash } from "../ui/format";
import { errorText } from "../ui/States";
import { ExpandedDiff } from "./ExpandedDiff";

/**
 * "Update available": the version production serves pins includes that are behind what they follow. The diff of
 * its expanded text, old pins against new, and one action that saves it with the new pins (and, when asked,
 * publishes it where allowed: a protected label makes a release request, a gated one needs its evaluation).
 */
export function UpdateBanner({
  projectId,
  promptId,
  version,
  includes,
  onUpdated,
}: {
  projectId: string;
  promptId: string;
  version: string;
  includes: IncludeState[];
  /** Told what the update did (the banner may go once it is done, so the screen shows it). */
  onUpdated: (result: IncludesUpdate) => void;
}) {
  const context = useProject();
  const canWrite = context !== null && can(context.role, "write");
  const canPublish = context !== null && can(context.role, "publish");
  const settings = useQuery({ ...labelSettingsQuery(projectId), enabled: canPublish });
  const production = settings.data?.labels.find((l) => l.name === "production");
  const update = useUpdateIncludes(projectId, promptId);
  const [publish, setPublish] = useState(false);
  const headingId = useId();
  const outdated = includes.filter((i) => i.outdated);

  return (
    <section className="card update-banner" aria-labelledby={headingId}>
      <div className="card-header">
        <div>
          <h2 id={headingId}>Update available</h2>
          <p>
            The version production serves (<span className="hash">{shortHash(version)}</span>) pins{" "}
            {outdated.length === 1 ? "an include" : `${outdated.length} includes`} behind what{" "}
            {outdated.length === 1 ? "it follows" : "they follow"}. Nothing changes until it is updated.
          </p>
        </div>
      </div>
      <div className="card-body stack">
        <ul className="update-pins" aria-label="Includes behind what they follow">
          {outdated.map((i) => (
            <li key={i.include}>
              <code className="include-chip">{i.include}</code> pinned to{" "}
              <span className="hash">{shortHash(i.version)}</span>; {i.pointer} of{" "}
              <Link to={`/p/${projectId}/prompts/${encodeURIComponent(i.prompt)}`}>{i.prompt}</Link> is{" "}
              <span className="hash">{i.current ? shortHash(i.current) : "gone"}</span> now
            </li>
          ))}
        </ul>
        <h3>The expanded text, before and after</h3>
        <ExpandedDiff projectId={projectId} promptId={promptId} version={version} includes={includes} />
        {canWrite ? (
          <div className="stack">
            {canPublish ? (
              <label className="checkbox">
                <input type="checkbox" checked={publish} onChange={(e) => setPublish(e.target.checked)} />
                Also publish it to production
              </label>
            ) : null}
            {publish && production?.protected ? (
              <p className="field-hint">
                production is protected: publishing makes a release request for an owner to approve.
              </p>
            ) : null}
            {publish && production?.required_evaluation ? (
              <p className="field-hint">
                production requires an evaluation: the new version moves it only once it has passed.
              </p>
            ) : null}
            <div className="update-actions">
              <button
                type="button"
                className="button button-primary"
                aria-disabled={update.isPending}
                onClick={() => {
                  if (update.isPending) return;
                  // Through the promise: the banner goes once the update lands (nothing is behind any more), and
                  // mutate's own callbacks are not called after it has gone.
                  update.mutateAsync({ label: "production", publish }).then(onUpdated, () => {});
                }}
              >
                {update.isPending ? "Updating…" : publish ? "Update and publish" : "Update includes"}
              </button>
            </div>
          </div>
        ) : (
          <p className="field-hint">An editor or an owner can update it.</p>
        )}
        {update.isError ? (
          <p className="field-error" role="alert">
            {errorText(update.error)}
          </p>
        ) : null}
      </div>
    </section>
  );
}

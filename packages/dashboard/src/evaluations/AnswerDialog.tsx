import { useState } from "react";
import type { CaseResultView, EvaluationView, VersionSummary } from "../api/evaluation-queries";
import { Dialog } from "../ui/Dialog";
import { formatCount, shortHash } from "../ui/format";
import { latency, score, versionTitle } from "./results";

/**
 * One case's answer on one version, with each check's verdict and reason (and the provider's error when it
 * failed), the case's inputs, and the other versions' answers a click away.
 */
export function AnswerDialog({
  view,
  item,
  version,
  onClose,
}: {
  view: EvaluationView;
  item: CaseResultView;
  version: number;
  onClose: () => void;
}) {
  const [shown, setShown] = useState(version);
  const cell = item.results[shown];
  const summary = view.versions[shown] as VersionSummary;
  const answer = cell?.answer;
  return (
    <Dialog title={`Case ${item.position + 1}`} onClose={onClose}>
      <div className="answer-dialog stack">
        {view.versions.length > 1 ? (
          <fieldset className="segmented answer-versions">
            <legend className="visually-hidden">Version</legend>
            {view.versions.map((v, i) => (
              <label key={v.version}>
                <input
                  type="radio"
                  name="answer-version"
                  checked={shown === i}
                  onChange={() => setShown(i)}
                  {...(i === version ? { "data-autofocus": true } : {})}
                />
                {versionTitle(v)}
              </label>
            ))}
          </fieldset>
        ) : null}
        <section aria-label="Inputs" className="answer-section">
          <h3>Inputs</h3>
          {Object.keys(item.case.vars).length > 0 ? (
            <dl className="facts answer-vars">
              {Object.entries(item.case.vars).map(([name, value]) => (
                <div key={name} className="answer-var">
                  <dt className="mono">{name}</dt>
                  <dd>{value}</dd>
                </div>
              ))}
            </dl>
          ) : (
            <p className="subtle">No variables.</p>
          )}
          {item.case.messages && item.case.messages.length > 0 ? (
            <pre className="answer-text">{JSON.stringify(item.case.messages, null, 2)}</pre>
          ) : null}
          {item.case.expected !== undefined ? (
            <>
              <h4>Expected</h4>
              <pre className="answer-text">{item.case.expected}</pre>
            </>
          ) : null}
        </section>
        <section aria-label="Answer" className="answer-section">
          <h3>
            Answer of {versionTitle(summary)} <span className="hash small">{shortHash(summary.version)}</span>
          </h3>
          {cell?.error ? (
            <p className="form-alert">
              {cell.error.code}: {cell.error.message}
            </p>
          ) : null}
          {answer ? (
            <>
              {answer.content !== null && answer.content !== undefined ? (
                <pre className="answer-text">{answer.content === "" ? "(empty)" : answer.content}</pre>
              ) : null}
              {answer.tool_calls && answer.tool_calls.length > 0 ? (
                <pre className="answer-text">{JSON.stringify(answer.tool_calls, null, 2)}</pre>
              ) : null}
            </>
          ) : cell?.state === "pending" ? (
            <p className="subtle">Not answered yet.</p>
          ) : cell?.error ? null : (
            <p className="subtle">No answer.</p>
          )}
          <p className="small muted">
            {cell?.latency_ms !== null && cell?.latency_ms !== undefined ? `${latency(cell.latency_ms)}` : "—"}
            {cell?.tokens
              ? ` · ${formatCount(cell.tokens.input)} tokens in, ${formatCount(cell.tokens.output)} out`
              : ""}
          </p>
        </section>
        {cell && cell.verdicts.length > 0 ? (
          <section aria-label="Checks" className="answer-section">
            <h3>Checks</h3>
            <ul className="answer-verdicts">
              {cell.verdicts.map((v) => (
                <li
                  key={v.name}
                  className={v.pass === null ? "eval-mark-error" : v.pass ? "eval-mark-pass" : "eval-mark-fail"}
                >
                  <strong>
                    {v.pass === null ? "! could not decide" : v.pass ? "✓ passed" : "✗ failed"}: {v.name}
                  </strong>{" "}
                  <span className="small">(score {score(v.score)})</span>
                  <span className="answer-reason">{v.reason}</span>
                </li>
              ))}
            </ul>
          </section>
        ) : null}
        <div className="dialog-actions">
          <button
            type="button"
            className="button"
            onClick={onClose}
            {...(view.versions.length > 1 ? {} : { "data-autofocus": true })}
          >
            Close
          </button>
        </div>
      </div>
    </Dialog>
  );
}

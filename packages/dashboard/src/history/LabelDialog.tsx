import { publishBody, releaseRequestBody } from "@promptstore/core/schemas";
import { type FormEvent, useRef, useState } from "react";
import { isApiError } from "../api/client";
import { errorFor, type FieldError, unplacedErrors } from "../api/errors";
import { useMoveLabel, useRequestRelease } from "../api/release-queries";
import { useRevealErrors } from "../forms/useRevealErrors";
import { validate } from "../forms/validate";
import { Dialog } from "../ui/Dialog";
import { Field, FormAlert } from "../ui/Field";
import { shortHash } from "../ui/format";
import { errorText } from "../ui/States";
import { VersionLine } from "./PublishDialog";
import type { Version } from "./versions";

/**
 * What is asked of a label: point it at a version, start or change a rollout of a candidate, complete the
 * rollout (the candidate whole), or abort it (the label's own version again). docs/releases.md.
 */
export type LabelAction =
  | { kind: "move"; label: string; version: string }
  | { kind: "rollout"; label: string; version: string; percent?: number }
  | { kind: "complete"; label: string; version: string }
  | { kind: "abort"; label: string; version: string }
  /** A rollout plan (docs/rollouts.md "Plans"): its own form, StartPlanDialog. */
  | { kind: "plan"; label: string; version: string };

interface LabelDialogProps {
  projectId: string;
  promptId: string;
  versions: readonly Version[];
  action: LabelAction;
  /** What the label serves now; null when it is not set on this prompt. */
  current: string | null;
  /** A protected label moves only through an approved request: the dialog asks for one instead. */
  isProtected: boolean;
  onClose: () => void;
  onDone: (notice: string) => void;
}

function titleOf(action: LabelAction, isProtected: boolean): { title: string; confirm: string } {
  const { label } = action;
  if (isProtected) return { title: `Request a release of ${label}`, confirm: "Request release" };
  switch (action.kind) {
    case "move":
      return { title: `Move ${label} to this version?`, confirm: `Move ${label}` };
    case "rollout":
      return { title: `Roll out on ${label}`, confirm: "Roll out" };
    case "complete":
      return { title: `Complete the rollout on ${label}?`, confirm: "Complete rollout" };
    case "abort":
      return { title: `Abort the rollout on ${label}?`, confirm: "Abort rollout" };
    case "plan":
      return { title: `Start a rollout plan on ${label}`, confirm: "Start plan" };
  }
}

/**
 * Moves a label, or rolls a version out on it, after showing what it serves now and what it will serve. On
 * a protected label the same form asks for a release instead, with a message for whoever approves it.
 */
export function LabelDialog({
  projectId,
  promptId,
  versions,
  action,
  current,
  isProtected,
  onClose,
  onDone,
}: LabelDialogProps) {
  const move = useMoveLabel(projectId, promptId);
  const request = useRequestRelease(projectId, promptId);
  const [version, setVersion] = useState(
    () => action.version || (versions.find((v) => v.version !== current)?.version ?? ""),
  );
  const [percent, setPercent] = useState(action.kind === "rollout" && action.percent ? String(action.percent) : "");
  const [message, setMessage] = useState("");
  const [errors, setErrors] = useState<FieldError[]>([]);
  const form = useRef<HTMLFormElement>(null);
  useRevealErrors(form, errors);
  const { label } = action;
  const { title, confirm } = titleOf(action, isProtected);
  const pending = move.isPending || request.isPending;
  const asksPercent = action.kind === "rollout" || (isProtected && action.kind === "move");
  const target = versions.find((v) => v.version === version) ?? null;
  const now = versions.find((v) => v.version === current) ?? null;

  // The fields this form shows; an error about any other (the label itself: protected) goes above the buttons.
  const shown = (field: string) =>
    (field === "version" && action.kind === "rollout") ||
    (field === "percent" && asksPercent) ||
    (field === "message" && isProtected);

  const serverError = (error: unknown) =>
    setErrors([
      isApiError(error) ? { field: error.field, message: error.detail } : { field: null, message: errorText(error) },
    ]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (action.kind === "rollout" && percent.trim() === "") {
      return setErrors([{ field: "percent", message: "must be a whole number from 1 to 100" }]);
    }
    const share = asksPercent && percent.trim() !== "" ? Number(percent) : undefined;
    if (isProtected) {
      const body = validate(releaseRequestBody, {
        label,
        version,
        ...(share === undefined ? {} : { percent: share }),
        ...(message.trim() ? { message: message.trim() } : {}),
      });
      if (!body.ok) return setErrors(body.errors);
      setErrors([]);
      request.mutate(body.data, {
        onSuccess: (release) =>
          onDone(
            `Release requested: ${release.label} to ${shortHash(release.version)}${
              release.percent ? ` for ${release.percent}% of reads` : ""
            }. An owner approves it under Releases.`,
          ),
        onError: serverError,
      });
      return;
    }
    const body = validate(publishBody, { version, label, ...(share === undefined ? {} : { percent: share }) });
    if (!body.ok) return setErrors(body.errors);
    setErrors([]);
    move.mutate(
      { label, version: body.data.version ?? version, percent: body.data.percent },
      {
        onSuccess: (moved) =>
          onDone(
            moved.rollout
              ? `${label} rolls ${shortHash(moved.rollout.candidate)} out to ${moved.rollout.percent}% of reads.`
              : `${label} is now version ${shortHash(moved.version)}.`,
          ),
        onError: serverError,
      },
    );
  };

  return (
    <Dialog title={title} onClose={onClose}>
      <form ref={form} className="form" onSubmit={submit} noValidate aria-label={title}>
        <dl className="facts publish-change">
          <dt>{label} now</dt>
          <dd>
            {current && !now ? <span className="hash">{shortHash(current)}</span> : <VersionLine version={now} />}
          </dd>
          {action.kind === "rollout" ? null : (
            <>
              <dt>Will be</dt>
              <dd>
                <VersionLine version={target} />
              </dd>
            </>
          )}
        </dl>
        {action.kind === "rollout" ? (
          <Field label="Candidate version" error={errorFor(errors, "version")}>
            {(control) => (
              <select {...control} className="select mono" value={version} onChange={(e) => setVersion(e.target.value)}>
                {versions
                  .filter((v) => v.version !== current)
                  .map((v) => (
                    <option key={v.version} value={v.version}>
                      {shortHash(v.version)} — {v.message ?? "no message"}
                    </option>
                  ))}
              </select>
            )}
          </Field>
        ) : null}
        {asksPercent ? (
          <Field
            label="Share of reads"
            optional={action.kind !== "rollout"}
            error={errorFor(errors, "percent")}
            hint={
              action.kind === "rollout"
                ? `1 to 99 percent of reads get the candidate, the others keep ${label}'s version; 100 completes the rollout.`
                : "Leave empty to move the label whole, or give 1 to 99 to start a gradual rollout when approved."
            }
          >
            {(control) => (
              <input
                {...control}
                className="input rollout-percent"
                type="number"
                inputMode="numeric"
                min={1}
                max={100}
                step={1}
                value={percent}
                onChange={(e) => setPercent(e.target.value)}
                data-autofocus={action.kind === "rollout" ? true : undefined}
              />
            )}
          </Field>
        ) : null}
        {isProtected ? (
          <Field label="Message" optional error={errorFor(errors, "message")} hint="Why, for whoever approves it.">
            {(control) => (
              <textarea
                {...control}
                className="textarea"
                rows={3}
                value={message}
                onChange={(e) => setMessage(e.target.value)}
                data-autofocus={action.kind !== "rollout" ? true : undefined}
              />
            )}
          </Field>
        ) : null}
        <p>
          {isProtected
            ? `${label} is protected: it moves when an owner other than you approves this request.`
            : action.kind === "abort"
              ? `Every read of ${label} gets its version again.`
              : action.kind === "rollout"
                ? `Reads of ${label} that send the same assign value (a user or tenant id) always get the same version.`
                : `Applications that read ${label} get the new version from their next request.`}
        </p>
        <FormAlert messages={unplacedErrors(errors, shown)} />
        <div className="dialog-actions">
          <button
            type="button"
            className="button"
            onClick={onClose}
            data-autofocus={!asksPercent && !isProtected ? true : undefined}
          >
            Cancel
          </button>
          <button
            type="submit"
            className={action.kind === "abort" && !isProtected ? "button button-danger" : "button button-primary"}
            disabled={pending}
            aria-busy={pending || undefined}
          >
            {confirm}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

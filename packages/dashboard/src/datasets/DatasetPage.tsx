import { can } from "@promptstore/core/accounts/permissions";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useLocation, useNavigate, useParams, useSearchParams } from "react-router";
import { isApiError } from "../api/client";
import { datasetQuery, exportHref, useDeleteDataset, useUpdateDataset } from "../api/dataset-queries";
import type { FormField } from "../forms/FormFields";
import { useForm } from "../forms/useForm";
import { NotFound } from "../shell/NotFound";
import { useProject } from "../shell/session";
import { ConfirmDialog, FormDialog } from "../ui/Dialog";
import { plural, savedByLabel, shortHash } from "../ui/format";
import { ErrorState, errorText, Loading } from "../ui/States";
import { TimeAgo } from "../ui/TimeAgo";
import { CasesCard } from "./CasesCard";
import { download } from "./download";
import { VersionsCard } from "./VersionsCard";
import "./datasets.css";

type Details = { name: string; description: string };
const NAME: FormField<Details> = { name: "name", label: "Name", required: true, autofocus: true, maxLength: 200 };
const DESCRIPTION: FormField<Details> = {
  kind: "textarea",
  name: "description",
  label: "Description",
  optional: true,
  rows: 3,
};

/**
 * One dataset: its cases at a version (the newest unless the address names one), edited, added and removed
 * case by case (each save a new version, or none when nothing changed), imported into, exported; its versions,
 * and what changed between two of them.
 */
export default function DatasetPage() {
  const { projectId = "", datasetId = "" } = useParams();
  const context = useProject();
  const location = useLocation();
  const navigate = useNavigate();
  const [params, setParams] = useSearchParams();
  const asked = params.get("version") ?? "";
  const view = useQuery(datasetQuery(projectId, datasetId, asked));
  const head = useQuery(datasetQuery(projectId, datasetId));
  const [notice, setNotice] = useState<{ text: string; kind: "success" | "info" } | null>(() => {
    const text = (location.state as { notice?: unknown } | null)?.notice;
    return typeof text === "string" ? { text, kind: "success" } : null;
  });
  const [editing, setEditing] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const remove = useDeleteDataset(projectId);

  if (view.isPending) return <Loading label="Loading the dataset…" />;
  if (view.isError) {
    if (isApiError(view.error) && view.error.status === 404 && asked === "") {
      return (
        <NotFound title="Dataset not found" message="This project has no such dataset: it may have been deleted." />
      );
    }
    return <ErrorState title="Could not load the dataset" error={view.error} onRetry={() => view.refetch()} />;
  }
  const dataset = view.data;
  const canWrite = context !== null && can(context.role, "write");
  const headVersion = head.data?.version ?? dataset.head;
  const atHead = dataset.version === headVersion;
  const showVersion = (version: string | null) => {
    const next = new URLSearchParams(params);
    if (version === null || version === headVersion) next.delete("version");
    else next.set("version", version);
    setParams(next);
  };
  const saved = (text: string, kind: "success" | "info" = "success") => {
    setNotice({ text, kind });
    showVersion(null);
  };

  return (
    <div className="stack-lg">
      <title>{`${dataset.name} · Datasets — Promptstore`}</title>
      <header className="prompt-header">
        <nav className="breadcrumb" aria-label="Breadcrumb">
          <Link to={`/p/${projectId}/datasets`}>Datasets</Link>
          <span aria-hidden="true">/</span>
        </nav>
        <div className="dataset-title">
          <h1>{dataset.name}</h1>
          <span className="prompt-id mono">{dataset.id}</span>
          <span className="row dataset-title-actions">
            <button
              type="button"
              className="button button-small"
              onClick={() => download(exportHref(projectId, dataset.id, dataset.version), `${dataset.name}.jsonl`)}
            >
              Export JSONL
            </button>
            {canWrite ? (
              <>
                <button type="button" className="button button-small" onClick={() => setEditing(true)}>
                  Rename…
                </button>
                <button type="button" className="button button-small" onClick={() => setDeleting(true)}>
                  Delete…
                </button>
              </>
            ) : null}
          </span>
        </div>
        {dataset.description ? <p className="dataset-about">{dataset.description}</p> : null}
        <p className="muted small">
          {atHead ? "Newest version" : "Version"} <span className="hash">{shortHash(dataset.version)}</span> ·{" "}
          {plural(dataset.cases, "case")} · saved by {savedByLabel(dataset.saved_by)} <TimeAgo iso={dataset.saved_at} />
          {dataset.message ? ` · “${dataset.message}”` : ""}
        </p>
      </header>
      <div aria-live="polite">
        {notice ? (
          <p className={notice.kind === "success" ? "notice notice-success" : "notice"} role="status">
            {notice.text}
          </p>
        ) : null}
      </div>
      {!atHead ? (
        <p className="notice notice-warning">
          This is an earlier version, read-only. The newest is <span className="hash">{shortHash(headVersion)}</span>.{" "}
          <button type="button" className="button button-small" onClick={() => showVersion(null)}>
            Show the newest
          </button>
        </p>
      ) : null}
      <CasesCard
        projectId={projectId}
        dataset={dataset}
        editable={canWrite && atHead}
        onSaved={(text, kind) => saved(text, kind)}
      />
      <VersionsCard projectId={projectId} dataset={dataset} shown={dataset.version} onShow={showVersion} />
      {editing ? <DetailsDialog projectId={projectId} dataset={dataset} onClose={() => setEditing(false)} /> : null}
      {deleting ? (
        <ConfirmDialog
          title={`Delete “${dataset.name}”?`}
          confirmLabel="Delete dataset"
          danger
          pending={remove.isPending}
          error={remove.isError ? errorText(remove.error) : null}
          onClose={() => setDeleting(false)}
          onConfirm={() =>
            remove.mutate(dataset.id, {
              onSuccess: () => navigate(`/p/${projectId}/datasets`, { replace: true }),
            })
          }
        >
          <p>
            Its {plural(head.data?.cases ?? dataset.cases, "case")} and every earlier version are deleted. This cannot
            be undone.
          </p>
        </ConfirmDialog>
      ) : null}
    </div>
  );
}

/** Renames or describes the dataset: not content, so no version is made. */
function DetailsDialog({
  projectId,
  dataset,
  onClose,
}: {
  projectId: string;
  dataset: { id: string; name: string; description: string | null };
  onClose: () => void;
}) {
  const update = useUpdateDataset(projectId, dataset.id);
  const form = useForm<Details>({ name: dataset.name, description: dataset.description ?? "" });
  return (
    <FormDialog
      form={form}
      fields={[NAME, DESCRIPTION]}
      title="Rename the dataset"
      name="Dataset details"
      submitLabel="Save"
      pending={update.isPending}
      onClose={onClose}
      onSubmit={() => {
        const description = form.values.description.trim();
        update.mutate(
          { name: form.values.name.trim(), description: description === "" ? null : description },
          { onSuccess: onClose, onError: form.refused },
        );
      }}
    />
  );
}

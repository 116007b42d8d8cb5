import { can } from "@promptstore/core/accounts/permissions";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useNavigate } from "react-router";
import { type DatasetListItem, datasetsQuery, exportHref, useDeleteDataset } from "../api/dataset-queries";
import { useProject } from "../shell/session";
import { formatCount, plural, shortHash } from "../ui/format";
import { type Column, RemoveDialog, SettingsCard, SettingsTable, useRemoval } from "../ui/SettingsTable";
import { EmptyState } from "../ui/States";
import { TimeAgo } from "../ui/TimeAgo";
import { download } from "./download";
import { NewDatasetDialog } from "./NewDatasetDialog";
import "./datasets.css";

/**
 * The project's datasets (docs/evaluations.md, "Datasets"): test cases an evaluation runs a prompt's versions
 * over. Listed with their newest version; created by typing, pasting or importing JSONL or CSV, or from a
 * prompt's saved examples; exported as JSONL; deleted after a confirmation.
 */
export default function Datasets() {
  const context = useProject();
  const projectId = context?.project.id ?? "";
  const list = useQuery(datasetsQuery(projectId));
  const removing = useRemoval(useDeleteDataset(projectId), (dataset: DatasetListItem) => dataset.id);
  const [creating, setCreating] = useState(false);
  const navigate = useNavigate();
  if (!context) return null;
  const canWrite = can(context.role, "write");
  const datasets = list.data?.datasets ?? [];

  const columns: Column<DatasetListItem>[] = [
    {
      header: "Name",
      cell: (d) => (
        <>
          <Link to={`/p/${projectId}/datasets/${d.id}`} className="dataset-name">
            {d.name}
          </Link>
          {d.description ? <span className="dataset-description">{d.description}</span> : null}
        </>
      ),
    },
    { header: "Cases", cell: (d) => formatCount(d.cases) },
    { header: "Version", cell: (d) => <span className="hash">{shortHash(d.version)}</span> },
    { header: "Updated", cell: (d) => <TimeAgo iso={d.updated_at} /> },
  ];

  return (
    <div className="stack-lg">
      <title>{`Datasets · ${context.project.name} — Promptstore`}</title>
      <header className="page-header">
        <div>
          <h1>Datasets</h1>
          <p>
            {context.project.name}
            {list.data ? ` · ${plural(datasets.length, "dataset")}` : ""}
          </p>
        </div>
      </header>
      <SettingsCard
        id="datasets-heading"
        title="Test cases"
        intro="Each dataset is a list of cases (variables, an optional chat and expected answer, tags) that an evaluation runs a prompt's versions over. Every save is a version, named by its content."
        action={
          canWrite ? (
            <button type="button" className="button button-primary" onClick={() => setCreating(true)}>
              New dataset
            </button>
          ) : undefined
        }
      >
        <SettingsTable
          query={list}
          rows={datasets}
          rowKey={(d) => d.id}
          loading="Loading the datasets…"
          caption="Datasets"
          className="dataset-table"
          empty={
            <EmptyState title="No datasets yet" level={3}>
              <p>
                A dataset holds the cases an evaluation asks each version: import a JSONL or CSV file, paste one, or
                turn a prompt's saved examples into cases. {canWrite ? "" : "Editors and owners create them."}
              </p>
            </EmptyState>
          }
          columns={columns}
          actions={(d) => [
            {
              label: "Export",
              name: `Export ${d.name} as JSONL`,
              onClick: () => download(exportHref(projectId, d.id), `${d.name}.jsonl`),
            },
            ...(canWrite ? [{ label: "Delete", name: `Delete ${d.name}`, onClick: () => removing.ask(d) }] : []),
          ]}
        />
      </SettingsCard>
      {creating ? (
        <NewDatasetDialog
          projectId={projectId}
          onClose={() => setCreating(false)}
          onCreated={(created, notice) => navigate(`/p/${projectId}/datasets/${created.id}`, { state: { notice } })}
        />
      ) : null}
      <RemoveDialog removal={removing} title={(d) => `Delete “${d.name}”?`} confirmLabel="Delete dataset">
        {(d) => <p>Its {plural(d.cases, "case")} and every earlier version are deleted. This cannot be undone.</p>}
      </RemoveDialog>
    </div>
  );
}

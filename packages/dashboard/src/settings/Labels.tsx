import type { RequirementBody } from "@promptstore/core/evaluations/requirements";
import { labelSettingsWithRequirement } from "@promptstore/core/evaluations/requirements";
import { PRODUCTION } from "@promptstore/core/labels";
import { labelName } from "@promptstore/core/schemas";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { connectionsQuery } from "../api/connection-queries";
import { datasetsQuery } from "../api/dataset-queries";
import type { FieldError } from "../api/errors";
import { type LabelSetting, labelSettingsQuery, useConfigureLabel } from "../api/release-queries";
import type { FormField } from "../forms/FormFields";
import { useForm } from "../forms/useForm";
import { validate } from "../forms/validate";
import { FormDialog } from "../ui/Dialog";
import { plural } from "../ui/format";
import { LabelBadge } from "../ui/LabelBadge";
import { byLabelOrder } from "../ui/labels";
import { type Column, SettingsCard, SettingsTable } from "../ui/SettingsTable";
import { EmptyState } from "../ui/States";

/** The project's labels (owners): what each is for, whether it is protected, what it falls back to. */
export function Labels({ projectId, projectName }: { projectId: string; projectName: string }) {
  const list = useQuery(labelSettingsQuery(projectId));
  const [editing, setEditing] = useState<LabelSetting | "new" | null>(null);
  // Production is a label every prompt may have: listed even before anyone configured it.
  const labels = list.data
    ? [
        ...list.data.labels,
        ...(list.data.labels.some((l) => l.name === PRODUCTION)
          ? []
          : [
              {
                name: PRODUCTION,
                description: "",
                protected: false,
                fallback: null,
                updated_at: "",
                in_use: 0,
                required_evaluation: null,
                rollback_allowed: true,
              },
            ]),
      ].sort((a, b) => byLabelOrder(a.name, b.name))
    : [];

  return (
    <SettingsCard
      id="labels-settings-heading"
      title="Labels"
      intro={<>The environments of {projectName}: what each is for, its protection and its fallback.</>}
      action={
        <button type="button" className="button button-primary" onClick={() => setEditing("new")}>
          Add label
        </button>
      }
    >
      <SettingsTable
        query={list}
        rows={labels}
        rowKey={(label) => label.name}
        loading="Loading the labels…"
        empty={<EmptyState title="No labels yet" level={3} />}
        className="label-settings-table"
        columns={COLUMNS}
        actions={(label) => [{ label: "Edit", name: `Edit ${label.name}`, onClick: () => setEditing(label) }]}
      />
      {editing ? (
        <LabelSettingsDialog
          projectId={projectId}
          label={editing === "new" ? null : editing}
          names={labels.map((l) => l.name)}
          onClose={() => setEditing(null)}
        />
      ) : null}
    </SettingsCard>
  );
}

const COLUMNS: Column<LabelSetting>[] = [
  {
    header: "Label",
    cell: (label) => (
      <>
        <LabelBadge name={label.name} />
        {label.description ? <span className="label-setting-description">{label.description}</span> : null}
      </>
    ),
  },
  {
    header: "Protected",
    cell: (label) =>
      label.protected ? (
        <span>
          <span className="badge badge-warning">protected</span>
        </span>
      ) : (
        <span className="subtle small">no</span>
      ),
  },
  {
    header: "Falls back to",
    cell: (label) =>
      label.fallback ? (
        // A wrapper, so the badge keeps its height when the stacked row's label wraps (phone).
        <span>
          <LabelBadge name={label.fallback} />
        </span>
      ) : (
        <span className="subtle small">none</span>
      ),
  },
  {
    header: "Required evaluation",
    cell: (label) =>
      label.required_evaluation ? (
        <span>
          <span className="badge badge-warning">gated</span>{" "}
          <span className="small">≥ {Math.round(label.required_evaluation.min_pass_rate * 1000) / 10}% pass</span>
        </span>
      ) : (
        <span className="subtle small">none</span>
      ),
  },
  {
    header: "In use",
    cell: (label) =>
      label.name === PRODUCTION ? (
        <span className="subtle small">every published prompt</span>
      ) : (
        plural(label.in_use, "prompt")
      ),
  },
];

type Values = {
  name: string;
  description: string;
  protected: boolean;
  fallback: string;
  /** Whether the label has a required evaluation; the fields below are sent only when it does. */
  gated: boolean;
  "required_evaluation.dataset": string;
  pin: boolean;
  "required_evaluation.checks": string;
  "required_evaluation.connection": string;
  "required_evaluation.model": string;
  "required_evaluation.min_pass_rate": string;
  no_regression: boolean;
  rollback_allowed: boolean;
};

const R = "required_evaluation";
const GATED: FormField<Values> = {
  kind: "checkbox",
  name: "gated",
  label: "Required evaluation: no version reaches this label without passing an evaluation",
};
const PIN: FormField<Values> = {
  kind: "checkbox",
  name: "pin",
  label: "Pin the dataset's current version (otherwise each evaluation uses its newest version)",
};
const CHECKS: FormField<Values> = {
  kind: "textarea",
  name: `${R}.checks`,
  label: "Checks (JSON)",
  rows: 4,
  mono: true,
  spellCheck: false,
  hint: 'As the Evaluate screen takes them: [{ "type": "expected", "trim": true }]',
};
const MODEL: FormField<Values> = {
  name: `${R}.model`,
  label: "Model name",
  optional: true,
  mono: true,
  spellCheck: false,
  maxLength: 200,
  hint: "Empty: each version's own model.",
};
const MIN_PASS_RATE: FormField<Values> = {
  name: `${R}.min_pass_rate`,
  label: "Minimum pass rate",
  inputMode: "decimal",
  hint: "0 to 1: the least share of cases that pass every check (0.95 is 95%).",
};
const NO_REGRESSION: FormField<Values> = {
  kind: "checkbox",
  name: "no_regression",
  label: "No regression: no case that passes on the label's current version may fail on the candidate",
};
const ROLLBACK: FormField<Values> = {
  kind: "checkbox",
  name: "rollback_allowed",
  label: "Rollbacks to a version this label served pass",
};

/** The requirement's fields as the form holds them. */
function requirementValues(requirement: RequirementBody | null): Partial<Values> {
  const [dataset = "", pinned] = requirement?.dataset.split("@") ?? [];
  return {
    gated: requirement !== null,
    [`${R}.dataset`]: dataset,
    pin: pinned !== undefined,
    [`${R}.checks`]: requirement
      ? JSON.stringify(requirement.checks, null, 2)
      : '[{ "type": "expected", "trim": true }]',
    [`${R}.connection`]: requirement?.connection ?? "",
    [`${R}.model`]: requirement?.model?.name ?? "",
    [`${R}.min_pass_rate`]: requirement ? String(requirement.min_pass_rate) : "0.9",
    no_regression: requirement?.no_regression ?? false,
  };
}

/**
 * The requirement the form describes, or the error of the field that cannot be read (checks that are not
 * JSON, a pass rate that is not a number); the schema words the rest.
 */
function requirementFrom(
  values: Values,
  before: RequirementBody | null,
  datasets: readonly { id: string; version: string }[],
): { ok: true; value: unknown } | { ok: false; error: FieldError } {
  const id = values[`${R}.dataset`];
  const [beforeId, beforePin] = before?.dataset.split("@") ?? [];
  let dataset = id;
  if (values.pin && id !== "") {
    // A pin kept from before stays; a new one takes the dataset's current version.
    const version = beforeId === id && beforePin ? beforePin : datasets.find((d) => d.id === id)?.version;
    if (version) dataset = `${id}@${version}`;
  }
  let checks: unknown;
  try {
    checks = JSON.parse(values[`${R}.checks`]);
  } catch {
    return { ok: false, error: { field: `${R}.checks`, message: "must be JSON: a list of checks" } };
  }
  const rateText = values[`${R}.min_pass_rate`].trim();
  const rate = Number(rateText);
  if (rateText === "" || !Number.isFinite(rate))
    return { ok: false, error: { field: `${R}.min_pass_rate`, message: "must be a number from 0 to 1" } };
  const name = values[`${R}.model`].trim();
  // Settings the form does not show (temperature, guard, per-check thresholds) are kept as they were.
  const model = { ...(before?.model ?? {}), name: name === "" ? undefined : name };
  const keptModel = Object.values(model).some((v) => v !== undefined) ? model : undefined;
  return {
    ok: true,
    value: {
      dataset,
      checks,
      connection: values[`${R}.connection`],
      ...(keptModel ? { model: keptModel } : {}),
      ...(before?.guard !== undefined ? { guard: before.guard } : {}),
      min_pass_rate: rate,
      ...(before?.min_check_pass_rates ? { min_check_pass_rates: before.min_check_pass_rates } : {}),
      ...(values.no_regression ? { no_regression: true } : {}),
    },
  };
}

const NAME: FormField<Values> = {
  name: "name",
  label: "Name",
  hint: "Lowercase letters, digits, - and _, a letter first: staging, eu-canary.",
  mono: true,
  spellCheck: false,
  maxLength: 32,
  autofocus: true,
};
const DESCRIPTION = {
  name: "description",
  label: "Description",
  optional: true,
  maxLength: 500,
  placeholder: "What this environment is for",
} satisfies FormField<Values>;
const PROTECTED: FormField<Values> = {
  kind: "checkbox",
  name: "protected",
  label: "Protected: moving it needs a release request approved by another owner",
};

/** The labels it may fall back to: none, or any other. */
function fallbackField(names: readonly string[], own: string): FormField<Values> {
  return {
    kind: "select",
    name: "fallback",
    label: "Falls back to",
    optional: true,
    hint: "Served to reads of a prompt that lacks this label. A protected label falls back only to a protected one.",
    options: [
      { value: "", label: "None: such a read is a 404" },
      ...names.filter((n) => n !== own).map((n) => ({ value: n, label: n })),
    ],
  };
}

function LabelSettingsDialog({
  projectId,
  label,
  names,
  onClose,
}: {
  projectId: string;
  label: LabelSetting | null;
  names: readonly string[];
  onClose: () => void;
}) {
  const configure = useConfigureLabel(projectId);
  const datasets = useQuery(datasetsQuery(projectId));
  const connections = useQuery(connectionsQuery(projectId));
  const before = label?.required_evaluation ?? null;
  const form = useForm<Values>({
    name: label?.name ?? "",
    description: label?.description ?? "",
    protected: label?.protected ?? false,
    fallback: label?.fallback ?? "",
    ...requirementValues(before),
    rollback_allowed: label?.rollback_allowed ?? true,
  } as Values);

  const submit = () => {
    const { name, description, fallback } = form.values;
    const checkedName = validate(labelName, name.trim(), "name");
    const requirement = form.values.gated
      ? requirementFrom(form.values, before, datasets.data?.datasets ?? [])
      : ({ ok: true, value: null } as const);
    if (!requirement.ok) return form.show([requirement.error]);
    const body = validate(labelSettingsWithRequirement, {
      description: description.trim(),
      protected: form.values.protected,
      fallback: fallback === "" ? null : fallback,
      required_evaluation: requirement.value,
      rollback_allowed: form.values.rollback_allowed,
    });
    const found = [...(checkedName.ok ? [] : checkedName.errors), ...(body.ok ? [] : body.errors)];
    if (!checkedName.ok || !body.ok) return form.show(found);
    configure.mutate({ name: checkedName.data, body: body.data }, { onSuccess: onClose, onError: form.refused });
  };

  return (
    <FormDialog
      form={form}
      fields={[
        // A label is named once, when it is added; editing one starts at its description.
        !label && NAME,
        { ...DESCRIPTION, autofocus: label !== null },
        PROTECTED,
        fallbackField(names, label?.name ?? form.values.name.trim()),
        GATED,
        ...(form.values.gated
          ? [
              {
                kind: "select",
                name: `${R}.dataset`,
                label: "Dataset",
                options: [
                  { value: "", label: datasets.isPending ? "Loading the datasets…" : "Choose a dataset" },
                  ...(datasets.data?.datasets ?? []).map((d) => ({
                    value: d.id,
                    label: `${d.name} (${d.cases} cases)`,
                  })),
                ],
              } satisfies FormField<Values>,
              PIN,
              CHECKS,
              {
                kind: "select",
                name: `${R}.connection`,
                label: "Connection",
                options: [
                  { value: "", label: connections.isPending ? "Loading the connections…" : "Choose a connection" },
                  ...(connections.data?.connections ?? []).map((c) => ({ value: c.id, label: c.name })),
                ],
              } satisfies FormField<Values>,
              MODEL,
              MIN_PASS_RATE,
              NO_REGRESSION,
            ]
          : []),
        ROLLBACK,
      ]}
      title={label ? `Label ${label.name}` : "Add a label"}
      name="Label settings"
      submitLabel={label ? "Save" : "Add label"}
      pending={configure.isPending}
      onSubmit={submit}
      onClose={onClose}
    />
  );
}

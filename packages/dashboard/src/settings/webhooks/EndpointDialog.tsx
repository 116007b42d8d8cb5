import { EVENT_TYPES, type EventType } from "@promptstore/core/events";
import { createWebhookBody, updateWebhookBody, WEBHOOK_LIMITS, type WebhookView } from "@promptstore/core/webhooks";
import { useState } from "react";
import { useCreateWebhook, useRotateSecret, useUpdateWebhook } from "../../api/webhook-queries";
import type { FormField } from "../../forms/FormFields";
import { useForm } from "../../forms/useForm";
import { validate } from "../../forms/validate";
import { ConfirmDialog, FormDialog } from "../../ui/Dialog";
import { errorText } from "../../ui/States";
import { EVENT_HELP, label, type Secret } from "./labels";

type Values = { url: string; description: string; events: readonly EventType[]; enabled: boolean };

const URL_FIELD: FormField<Values> = {
  name: "url",
  label: "URL",
  hint: "An http:// or https:// address on the internet; requests come from this server.",
  type: "url",
  placeholder: "https://example.com/hooks/promptstore",
  autofocus: true,
};
const DESCRIPTION: FormField<Values> = {
  name: "description",
  label: "Description",
  optional: true,
  maxLength: WEBHOOK_LIMITS.descriptionLength,
  placeholder: "What receives these events",
};
const EVENTS: FormField<Values> = {
  kind: "choices",
  name: "events",
  label: "Events",
  options: EVENT_TYPES.map((type) => ({ value: type, label: label(type), help: EVENT_HELP[type] })),
};
const ENABLED: FormField<Values> = {
  kind: "checkbox",
  name: "enabled",
  label: "Enabled: new events are queued and sent",
};

/** Adds an endpoint, or changes one (and rotates its secret). */
export function EndpointDialog({
  projectId,
  endpoint,
  onClose,
  onSecret,
}: {
  projectId: string;
  endpoint: WebhookView | null;
  onClose: () => void;
  onSecret: (shown: Secret) => void;
}) {
  const create = useCreateWebhook(projectId);
  const update = useUpdateWebhook(projectId, endpoint?.id ?? "");
  const rotate = useRotateSecret(projectId, endpoint?.id ?? "");
  const form = useForm<Values>({
    url: endpoint?.url ?? "",
    description: endpoint?.description ?? "",
    events: endpoint?.events ?? [...EVENT_TYPES],
    enabled: endpoint?.enabled ?? true,
  });
  const [confirmRotate, setConfirmRotate] = useState(false);

  const submit = () => {
    const { url, description, events, enabled } = form.values;
    // In the order the checkboxes show, whatever order they were ticked in.
    const chosen = EVENT_TYPES.filter((type) => events.includes(type));
    if (endpoint === null) {
      const body = validate(createWebhookBody, { url, events: chosen, ...(description ? { description } : {}) });
      if (!body.ok) return form.show(body.errors);
      create.mutate(body.data, {
        onSuccess: (created) =>
          onSecret({ title: "Your new endpoint's signing secret", url: created.url, secret: created.secret }),
        onError: form.refused,
      });
    } else {
      const body = validate(updateWebhookBody, { url, events: chosen, description, enabled });
      if (!body.ok) return form.show(body.errors);
      update.mutate(body.data, { onSuccess: onClose, onError: form.refused });
    }
  };

  if (confirmRotate && endpoint) {
    return (
      <ConfirmDialog
        title="Rotate the signing secret?"
        confirmLabel="Rotate secret"
        danger
        pending={rotate.isPending}
        error={rotate.isError ? errorText(rotate.error) : null}
        onClose={() => setConfirmRotate(false)}
        onConfirm={() =>
          rotate.mutate(undefined, {
            onSuccess: (rotated) =>
              onSecret({ title: "The endpoint's new signing secret", url: rotated.url, secret: rotated.secret }),
          })
        }
      >
        <p>
          Every request from now on, retries included, is signed with a new secret. Until your receiver has it, it will
          refuse them; refused deliveries are retried for 24 hours.
        </p>
      </ConfirmDialog>
    );
  }

  return (
    <FormDialog
      form={form}
      fields={[URL_FIELD, DESCRIPTION, EVENTS, endpoint && ENABLED]}
      title={endpoint ? "Edit endpoint" : "Add an endpoint"}
      name="Webhook endpoint"
      className="webhook-form"
      submitLabel={endpoint ? "Save" : "Add endpoint"}
      pending={create.isPending || update.isPending}
      onSubmit={submit}
      onClose={onClose}
    >
      {endpoint ? (
        <div className="webhook-rotate">
          <p className="field-hint">
            The signing secret was shown once, when the endpoint was added. Lost it, or leaked it? Rotate it.
          </p>
          <button type="button" className="button button-small" onClick={() => setConfirmRotate(true)}>
            Rotate secret…
          </button>
        </div>
      ) : null}
    </FormDialog>
  );
}

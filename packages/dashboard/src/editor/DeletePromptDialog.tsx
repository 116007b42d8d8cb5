import { useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useNavigate } from "react-router";
import { isApiError } from "../api/client";
import { keys, useDeletePrompt, versionsQuery } from "../api/queries";
import { Dialog } from "../ui/Dialog";
import { Field } from "../ui/Field";
import { errorText } from "../ui/States";
import { clearDraft } from "./rescue";

interface DeletePromptDialogProps {
  projectId: string;
  prompt: { id: string; name: string };
  onClose: () => void;
}

/** Where the list says what was deleted; the editor lets this navigation through with unsaved edits. */
export interface DeletedState {
  notice: string;
  deleted: true;
}

/** "and … will be deleted": how many versions go with the prompt, when known. */
function theVersions(count: number | undefined): string {
  if (count === undefined) return "all its versions";
  if (count === 1) return "its only version";
  if (count === 2) return "both its versions";
  return `all ${count.toLocaleString("en")} versions`;
}

/**
 * Deleting cannot be undone and stops every application that reads the prompt, so the person types the
 * prompt's id to confirm: the button stays disabled until the text is exactly the id.
 */
export function DeletePromptDialog({ projectId, prompt, onClose }: DeletePromptDialogProps) {
  const remove = useDeletePrompt(projectId);
  const client = useQueryClient();
  const navigate = useNavigate();
  const versions = useQuery(versionsQuery(projectId, prompt.id));
  const [typed, setTyped] = useState("");
  const confirmed = typed === prompt.id;
  const count = versions.data?.versions.length;

  const leave = (notice: string) => {
    clearDraft(projectId, prompt.id);
    const state: DeletedState = { notice, deleted: true };
    navigate(`/p/${projectId}/prompts`, { replace: true, state });
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!confirmed || remove.isPending) return;
    remove.mutate(prompt.id, {
      onSuccess: () => leave(`Deleted “${prompt.name}” (${prompt.id}) and ${theVersions(count)}.`),
    });
  };

  // Deleted by someone else meanwhile: nothing left to do here but leave, forgetting what was shown of it.
  const gone = remove.isError && isApiError(remove.error) && remove.error.status === 404;
  const backToList = () => {
    client.removeQueries({ queryKey: keys.prompt(projectId, prompt.id) });
    void client.invalidateQueries({ queryKey: keys.promptPages(projectId) });
    leave(`“${prompt.name}” (${prompt.id}) had already been deleted.`);
  };

  return (
    <Dialog title="Delete this prompt?" onClose={onClose}>
      <p>
        <strong>{prompt.name}</strong> and {theVersions(count)} will be deleted for good. Applications that read{" "}
        <code>{prompt.id}</code> get “not found” from their next request. This cannot be undone.
      </p>
      <form className="stack" onSubmit={submit} noValidate>
        <Field
          label={
            <>
              Type <code>{prompt.id}</code> to confirm
            </>
          }
        >
          {(control) => (
            <input
              {...control}
              className="input mono"
              value={typed}
              onChange={(e) => setTyped(e.target.value)}
              autoComplete="off"
              autoCapitalize="off"
              spellCheck={false}
              data-autofocus
            />
          )}
        </Field>
        {remove.isError ? (
          <p className="form-alert" role="alert">
            {gone
              ? "This prompt no longer exists: someone may have deleted it already."
              : `Could not delete the prompt: ${errorText(remove.error)}`}
          </p>
        ) : null}
        <div className="dialog-actions">
          {gone ? (
            <button type="button" className="button button-primary" onClick={backToList}>
              Back to the prompts
            </button>
          ) : (
            <>
              <button type="button" className="button" onClick={onClose}>
                Cancel
              </button>
              <button
                type="submit"
                className="button button-danger"
                disabled={!confirmed || remove.isPending}
                aria-busy={remove.isPending || undefined}
              >
                {remove.isPending ? "Deleting…" : "Delete prompt"}
              </button>
            </>
          )}
        </div>
      </form>
    </Dialog>
  );
}

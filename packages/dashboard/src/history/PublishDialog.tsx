import { usePublish } from "../api/queries";
import { ConfirmDialog } from "../ui/Dialog";
import { shortHash } from "../ui/format";
import { errorText } from "../ui/States";
import { publishKind, type Version } from "./versions";

interface PublishDialogProps {
  projectId: string;
  promptId: string;
  versions: readonly Version[];
  production: string | null;
  target: Version;
  onClose: () => void;
  onPublished: (version: string) => void;
}

export function VersionLine({ version }: { version: Version | null }) {
  if (!version) return <span className="muted">nothing (not published yet)</span>;
  return (
    <>
      <span className="hash">{shortHash(version.version)}</span>{" "}
      {version.message ? <span>{version.message}</span> : <span className="subtle">No message</span>}
    </>
  );
}

/** What production changes from and to, before it does: applications read the new version at once. */
export function PublishDialog({
  projectId,
  promptId,
  versions,
  production,
  target,
  onClose,
  onPublished,
}: PublishDialogProps) {
  const publish = usePublish(projectId, promptId);
  const kind = publishKind(versions, production, target.version) ?? "publish";
  const current = versions.find((v) => v.version === production) ?? null;
  return (
    <ConfirmDialog
      title={kind === "publish" ? "Publish this version?" : "Roll back production?"}
      confirmLabel={kind === "publish" ? "Publish" : "Roll back"}
      pending={publish.isPending}
      error={publish.isError ? errorText(publish.error) : null}
      onClose={onClose}
      onConfirm={() => publish.mutate(target.version, { onSuccess: (result) => onPublished(result.version) })}
    >
      <dl className="facts publish-change">
        <dt>Production now</dt>
        <dd>
          <VersionLine version={current} />
        </dd>
        <dt>Will be</dt>
        <dd>
          <VersionLine version={target} />
        </dd>
      </dl>
      <p>Applications that read production get this version from their next request.</p>
    </ConfirmDialog>
  );
}

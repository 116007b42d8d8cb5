import type { DeliveryView, WebhookView } from "@promptstore/core/webhooks";
import { useQuery } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { deliveriesQuery } from "../../api/webhook-queries";
import { Dialog } from "../../ui/Dialog";
import { plural } from "../../ui/format";
import { EmptyState, ErrorState, Loading } from "../../ui/States";
import { TimeAgo, useNow } from "../../ui/TimeAgo";
import { label, STATUS_BADGE, timeUntil } from "./labels";

/** An endpoint's recent deliveries, newest first. */
export function DeliveriesDialog({
  projectId,
  endpoint,
  onClose,
}: {
  projectId: string;
  endpoint: WebhookView;
  onClose: () => void;
}) {
  const deliveries = useQuery(deliveriesQuery(projectId, endpoint.id));
  const now = useNow();

  let body: ReactNode;
  if (deliveries.isPending) body = <Loading label="Loading the deliveries…" />;
  else if (deliveries.isError) body = <ErrorState error={deliveries.error} onRetry={() => deliveries.refetch()} />;
  else if (deliveries.data.deliveries.length === 0) {
    body = (
      <EmptyState title="Nothing sent yet" level={3}>
        <p>The next change to a prompt that this endpoint listens for is sent here.</p>
      </EmptyState>
    );
  } else {
    body = (
      <div className="table-wrap webhook-deliveries">
        <table className="table table-stack">
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Last answer</th>
              <th scope="col">Next attempt</th>
            </tr>
          </thead>
          <tbody>
            {deliveries.data.deliveries.map((d) => (
              <DeliveryRow key={d.id} delivery={d} now={now} />
            ))}
          </tbody>
        </table>
      </div>
    );
  }

  return (
    <Dialog title="Recent deliveries" onClose={onClose}>
      <p>
        To <span className="webhook-url">{endpoint.url}</span>, newest first. Each event goes out only after the one
        before it was delivered or has failed for good.
      </p>
      {body}
      <div className="dialog-actions">
        <button type="button" className="button button-primary" onClick={onClose} data-autofocus>
          Close
        </button>
      </div>
    </Dialog>
  );
}

function DeliveryRow({ delivery: d, now }: { delivery: DeliveryView; now: number }) {
  return (
    <tr>
      <td className="cell-primary">
        <span className="webhook-delivery-event">{label(d.event_type)}</span>
        <span className="subtle webhook-delivery-meta">
          {/* A project's event (label.requirement_changed) is about no prompt: its prompt_id is "". */}
          {d.prompt_id === "" ? "" : `${d.prompt_id} · `}event {d.event_id} · <TimeAgo iso={d.created_at} />
        </span>
      </td>
      <td data-label="Status">
        <span className="webhook-status">
          <span className={STATUS_BADGE[d.status]}>{d.status}</span>
          <span className="subtle">{plural(d.attempts, "attempt")}</span>
        </span>
      </td>
      <td data-label="Last answer">
        {d.attempts === 0 ? (
          <span className="subtle">not tried yet</span>
        ) : (
          <span className="webhook-answer">
            <span>{d.last_response_code === null ? "no answer" : `HTTP ${d.last_response_code}`}</span>
            {d.last_error ? <span className="webhook-error">{d.last_error}</span> : null}
          </span>
        )}
      </td>
      <td data-label="Next attempt">
        {d.next_attempt_at ? (
          <time dateTime={d.next_attempt_at}>{timeUntil(d.next_attempt_at, now)}</time>
        ) : (
          <span className="subtle">—</span>
        )}
      </td>
    </tr>
  );
}
